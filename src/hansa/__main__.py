"""``python -m hansa`` runs the command line."""

from hansa.cli import main

main()
