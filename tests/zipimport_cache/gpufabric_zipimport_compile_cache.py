# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE of the test tiers: a bytecode cache for Python sources imported from zip archives.

Every Ansible module run ships its module and ``ansible.module_utils`` as source files in an AnsiballZ zip, and
Python's ``zipimport`` compiles each imported source on every run (it reads bytecode from a zip, never writes it).
In a molecule test container that is about a quarter of a module task's CPU
(``bench/container_module_runs.py``); on the controller, where the cluster roles' modules run, the unoptimised
Python of a development machine takes longer still. The tiers run thousands of module tasks on two cores. This
module wraps ``zipimport._compile_source`` so that a source compiled once is read back from the cache directory as
marshalled code the next time. Two ways in, both of the test tiers only:

- the molecule test image (``tests/images/build-debian12-systemd.sh``) installs it with a ``.pth`` file that imports
  it at interpreter start; cache in ``/var/cache/gpufabric-zipimport`` of each container;
- the controller's modules of the cluster and molecule tiers: ``sitecustomize.py`` beside this file imports it when
  the tier puts this directory on ``PYTHONPATH`` and names a cache with ``GPUFABRIC_ZIPIMPORT_CACHE`` (the Makefile
  and ``.config/molecule/config.yml``).

It changes no result: the key is the source's hash (the one hash-based ``.pyc`` files use) with its path inside
the archive and the interpreter's bytecode magic, the code read back gets the archive path the import asked for
(tracebacks name the file of this run), and anything unexpected (an unreadable, truncated or foreign cache file,
a directory that cannot be written) compiles the source as ``zipimport`` would. ``GPUFABRIC_ZIPIMPORT_CACHE``
names the directory (default ``/var/cache/gpufabric-zipimport``); empty, or a relative path, turns the cache off.
Nothing in the collection knows it exists; it is installed on no managed host and in no environment the playbooks
run from outside the tests.
"""

import _imp
import marshal
import os
import zipimport

# An empty GPUFABRIC_ZIPIMPORT_CACHE turns the cache off (bench/container_module_runs.py compares both); a relative
# path would be read under whatever directory a module runs in, so it turns it off too.
CACHE_DIRECTORY = os.environ.get("GPUFABRIC_ZIPIMPORT_CACHE", "/var/cache/gpufabric-zipimport")
_MAGIC = zipimport._bootstrap_external.MAGIC_NUMBER  # pylint: disable=protected-access
_compile_source = zipimport._compile_source  # pylint: disable=protected-access


def _path_inside_archive(pathname):
    """The part of ``pathname`` after the archive: ansible/module_utils/basic.py of .../payload.zip/ansible/..."""
    marker = pathname.find(".zip" + os.sep)
    return pathname[marker + 5:] if marker >= 0 else pathname


def _with_filename(code, filename):
    """``code`` and every code object nested in it, naming ``filename`` as their file."""
    constants = tuple(_with_filename(constant, filename) if isinstance(constant, type(code)) else constant
                      for constant in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)


def cache_path(pathname, source):
    """Where the code of ``source``, imported as ``pathname``, is kept."""
    inside = _path_inside_archive(pathname)
    digest = _imp.source_hash(int.from_bytes(_MAGIC, "little"), source).hex()
    return os.path.join(CACHE_DIRECTORY, _MAGIC.hex(), inside.replace(os.sep, "%") + "." + digest)


def compile_source(pathname, source):
    """``zipimport``'s compile step, read from the cache when this source was compiled here before."""
    path = cache_path(pathname, source)
    try:
        with open(path, "rb") as handle:
            code = marshal.loads(handle.read())
        if isinstance(code, type(compile_source.__code__)):
            return _with_filename(code, pathname)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = _compile_source(pathname, source)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "wb") as handle:
            # kept under the path inside the archive: the same bytes whatever run compiled it
            handle.write(marshal.dumps(_with_filename(code, _path_inside_archive(pathname))))
        os.replace(temporary, path)
    except OSError:
        pass
    return code


if os.path.isabs(CACHE_DIRECTORY):
    zipimport._compile_source = compile_source  # pylint: disable=protected-access
