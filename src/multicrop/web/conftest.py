"""pytest: the web modules need the ``web`` extra; without it their doctests are not collected."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("fastapi") else ["*.py"]
