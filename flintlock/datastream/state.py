"""State descriptors and state interfaces under PyFlink's module path
(``pyflink.datastream.state``); defined in ``flintlock.common.state``."""

from flintlock.common.state import *  # noqa: F403
from flintlock.common.state import __all__  # noqa: F401
