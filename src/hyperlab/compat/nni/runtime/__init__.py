"""NNI's ``nni.runtime``: what a user's own NNI advisor imports (``msg_dispatcher_base``,
``protocol``, ``tuner_command_channel``); hyperlab runs such an advisor through
``hyperlab.compat.nni.advisor.CustomAdvisor``."""
