import sys

from kbq.cli import main

sys.exit(main())
