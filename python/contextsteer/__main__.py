"""``python -m contextsteer``: the same as the ``contextsteer`` command."""

from .cli import main

raise SystemExit(main())
