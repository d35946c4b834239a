"""The ``flintlock`` command line."""
