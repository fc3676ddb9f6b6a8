"""hyperlab's version, in a leaf module so that any layer can name it without importing the
public face (``hyperlab/__init__.py``, which sits above every package)."""

__version__ = "0.1.0"
