"""Python dependency options: what the job's TaskManagers install and unpack before they load
its code (``flintlock.usercode.python_env``). Key names are PyFlink's where it has them."""

from flintlock.common.config_option import ConfigOption, OptionType

REQUIREMENTS = ConfigOption(
    "python.requirements", OptionType.STRING, None,
    "A requirements file the TaskManagers pip-install before loading the job, optionally "
    "followed by '#' and a directory of downloaded packages to install from offline "
    "(StreamExecutionEnvironment.set_python_requirements).",
)
ARCHIVES: ConfigOption[list[str]] = ConfigOption(
    "python.archives", OptionType.LIST, [],
    "Zip or tar archives unpacked into the TaskManagers' working directory, each optionally "
    "followed by '#' and the directory to unpack it into (default: the archive's file name) "
    "(StreamExecutionEnvironment.add_python_archive).",
)
DEPENDENCIES_DIR = ConfigOption(
    "flintlock.python.dependencies-dir", OptionType.STRING, None,
    "Where TaskManagers keep installed requirements and unpacked archives, shared by the "
    "TaskManagers of a host and reused while the content is unchanged (default: "
    "flintlock-python-env in the system's temporary directory).",
)
INSTALL_TIMEOUT = ConfigOption(
    "flintlock.python.requirements.install-timeout", OptionType.DURATION, 600_000,
    "How long pip may take to install the job's requirements on a host.", minimum=1,
)
FILES = ConfigOption(
    "python.files", OptionType.STRING, None,
    "Python files, directories, zips, eggs and wheels the job's TaskManagers import from, "
    "comma-separated (StreamExecutionEnvironment.add_python_file appends to it). They travel "
    "through Spark and are resolved by classloader.resolve-order (docs/usercode.md).",
)
SHIP_JOB_DIRECTORY = ConfigOption(
    "flintlock.python.ship-job-directory", OptionType.BOOLEAN, True,
    "Whether the directory the job's main module was loaded from travels with the job, as "
    "the first of its files (docs/usercode.md).",
)
GC_TUNED = ConfigOption(
    "flintlock.python.gc.tuned", OptionType.BOOLEAN, True,
    "Whether a TaskManager process tunes CPython's cycle collector while it runs a job: the "
    "objects that exist when the job starts are frozen out of full collections, and young "
    "collections wait for flintlock.python.gc.young-threshold objects (docs/decisions.md, "
    "\"The cycle collector in a TaskManager\").",
)
GC_YOUNG_THRESHOLD = ConfigOption(
    "flintlock.python.gc.young-threshold", OptionType.INT, 50_000,
    "How many more container objects than were freed a TaskManager allocates before CPython "
    "runs a young collection, when flintlock.python.gc.tuned is true (CPython's own default "
    "is 700).", minimum=1,
)
BUNDLE_TIME = ConfigOption(
    "python.fn-execution.bundle.time", OptionType.DURATION, 1000,
    "How long a bundle lasts at most: a processing-time timer that was already due when it "
    "was registered waits at most this long for the end of its bundle (as in PyFlink, it "
    "fires after the event-time timers of the watermark that ends the bundle sooner; "
    "runtime/tasks/timer_service.py), and a Python aggregate function's buffered rows are "
    "aggregated at the latest this long after the first of them "
    "(runtime/tasks/bundle_process_operator.py).", minimum=1,
)
BUNDLE_SIZE = ConfigOption(
    "python.fn-execution.bundle.size", OptionType.INT, 100_000,
    "How many records a bundle holds at most: a Python aggregate function (udaf, udtaf) "
    "buffers a bundle's rows per key and emits one result per key when the bundle ends, as "
    "PyFlink does (runtime/tasks/bundle_process_operator.py).", minimum=1,
)
