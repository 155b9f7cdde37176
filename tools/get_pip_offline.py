# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in for pypa's get-pip.py, for ansible-test's pip bootstrap where its download host is unreachable.

ansible-test runs ``python get-pip.py --disable-pip-version-check pip==X [--no-setuptools] [--no-wheel]``
in each fresh sanity virtual environment.  This does the same with the interpreter's bundled ``ensurepip``
and then upgrades to the requested pip from the package index.  `make sanity` copies it to the cache path
ansible-test looks at (~/.ansible/test/cache/get_pip_<version>.py).
"""

import subprocess
import sys


def main():
    """Install pip into the running interpreter's environment."""
    args = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *args])


if __name__ == "__main__":
    main()
