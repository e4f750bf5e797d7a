"""The `grace` command line (the console script is `bot.cli.main:main`)."""
