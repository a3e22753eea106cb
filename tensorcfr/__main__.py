import sys

from tensorcfr.cli.commands import main

sys.exit(main())
