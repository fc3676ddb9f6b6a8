"""NNI's multi-phase trials: ``nni.get_next_parameter()`` called again gets another parameter
set from the tuner; each phase's result is stored, shown and learnt from, and replayed."""
