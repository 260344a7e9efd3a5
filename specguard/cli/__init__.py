"""The command line: ``main.py`` assembles the commands, each in its own module."""
