"""Stream tasks: the mailbox loop of one subtask, its operator chain and input processor."""
