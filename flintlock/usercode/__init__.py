"""The job's own code: which modules travel with a job to its TaskManagers (child-first or
parent-first, Flink's user-code class loading; see ``shipping``).

May import ``flintlock.common`` only.
"""
