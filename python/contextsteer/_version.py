# SPDX-License-Identifier: MIT
# The one place the version is written: pyproject.toml reads it (scikit-build-core's regex
# metadata provider), contextsteer.__version__ and `contextsteer --version` import it.
__version__ = "0.1.0"
