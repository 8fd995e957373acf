"""``python -m cardarena.locm ...``: the ``locm`` command without the installed script."""

import sys

from .cli.main import main

sys.exit(main())
