import sys

from memory_ext.cli import main

sys.exit(main())
