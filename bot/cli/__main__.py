"""`python -m bot.cli …`: the same as the `grace` console script."""

import sys

from bot.cli.main import main

sys.exit(main())
