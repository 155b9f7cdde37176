# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE: imported by Python's ``site`` at start when a test tier puts this directory on ``PYTHONPATH``.

It turns on the zipimport compile cache (``gpufabric_zipimport_compile_cache.py`` beside it) in every Python the tier
starts on the controller, the modules Ansible runs there included. Outside the test tiers nothing puts this
directory on the path.
"""

import gpufabric_zipimport_compile_cache  # noqa: F401  pylint: disable=unused-import
