"""``klogspec recover``: the loader's recovery of partition directories, planned without
changing anything (plan.py: the loader itself over recording.py's storage), then run with every removed byte kept
(quarantine.py); cli.py is the command."""
