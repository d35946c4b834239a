"""The job's own code (Flink's user-code class loading; docs/usercode.md): what travels with a
job to its TaskManagers (``job_files``, ``python_env``), which modules are pickled by value
(``shipping``), how a TaskManager resolves the job's imports child-first or parent-first
(``loader``) and retires the job's code when it ends (``leaks``).

May import ``flintlock.common`` only.
"""
