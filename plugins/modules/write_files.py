#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: write_files
short_description: Write several files on the controller in one task
version_added: 1.0.0
description:
  - Writes a list of files, each given by its path, content and mode, on the controller (where
    C(ansible-playbook) runs) in one task, without a connection or a module process per file. The reports of
    the collection's playbooks are written with it.
  - A file is rewritten only when its content or its mode differs, through a temporary file in the same
    directory and a rename, so a reader never sees half a file and a second run with the same input changes
    nothing. A file whose content is the same but whose mode differs only gets its mode changed.
  - The directory of each file is created when missing (parents included). With O(directory_mode) it gets
    that mode, also when it already exists.
  - Every path is checked before anything is written; a path that is a directory, a symbolic link or a
    duplicate path, a directory that is a symbolic link (unless O(follow_directory_links)), and a file name too
    long for its temporary file fail the task with nothing written.
  - Symbolic links are not followed where the files are written. A link at a file's path is refused
    (C(<path> is a symbolic link; write_files does not follow links)), never written through, chmodded through or
    read for the diff; so is a link as the directory of the files (the path's last directory) unless
    O(follow_directory_links) allows it. Links further up the path (C(/var -> /private/var), a home directory on
    a link) are followed. Directories and files are opened with C(O_NOFOLLOW) and their modes set through those
    descriptors, so a link that appears after the checks is refused too.
  - A write that was killed leaves its temporary file, C(.<name>.<8 random characters>), beside the file. The
    next run that writes that file (outside check mode, whether or not the file changes) removes the temporary
    files of that same file that are regular files of the same owner and were last modified more than 5 minutes
    ago; a younger one may belong to another run writing the same file at the same time and is left. Other files,
    such as an editor's C(.report.md.swp), are never removed. Removing them does not make the task changed.
  - This is an action plugin that runs on the controller whatever the task's host or C(delegate_to).
author: gpufabric.cluster contributors (@gpufabric)
options:
  files:
    description:
      - The files to write.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description:
          - Where to write the file; C(~) is expanded and a relative path is relative to the controller's
            working directory.
        type: path
        required: true
      content:
        description:
          - The whole text of the file, written as UTF-8.
        type: str
        required: true
      mode:
        description:
          - The file's permission bits, an octal string such as V('0644') (quote it in YAML) or a number.
        type: raw
        default: '0644'
      volatile:
        description:
          - A regular expression (Python syntax) for text of O(files[].content) that changes on every run without
            the file meaning anything new, such as the time a report was generated.
          - Every match is left out when the file on disk is compared with O(files[].content), so a file that
            differs only there is left as it is (its time then says when its content last changed) and the task
            reports no change.
          - A pattern that matches the empty string is refused.
        type: str
        version_added: 1.3.0
  directory_mode:
    description:
      - Permission bits for the directories of the files, created or existing, as for O(files[].mode).
      - Unset, a directory it creates gets the default of the controller's umask and an existing one is left
        as it is.
      - Never set through a link; a directory that is a link allowed by O(follow_directory_links) keeps the mode
        it has.
    type: raw
  follow_directory_links:
    description:
      - Allow the directory of the files (the last directory of their paths) to be a symbolic link to a
        directory, and write the files into the directory it points to.
      - The link itself and the mode of the directory it points to are left as they are.
      - V(false) refuses such a link with nothing written. A link at a file's own path is refused either way.
    type: bool
    default: false
    version_added: 1.2.0
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Nothing is written; the result says which files and directories would change.
  diff_mode:
    support: full
    details:
      - One before/after pair per file whose content would change, and one per changed mode.
      - The "before" is only ever the content of the regular file the task replaces, never of a file a link
        points to.
  platform:
    platforms: posix
notes:
  - Content is compared byte for byte, so the result reports changed only when a file really differs.
seealso:
  - module: ansible.builtin.copy
"""

EXAMPLES = r"""
- name: Write a report as JSON and as Markdown in one task
  gpufabric.cluster.write_files:
    directory_mode: "0755"
    files:
      - path: "{{ report_dir }}/report.json"
        content: "{{ report | to_nice_json }}\n"
        mode: "0644"
      - path: "{{ report_dir }}/report.md"
        content: "{{ report_markdown }}"
"""

RETURN = r"""
files:
  description: What happened to each file, in the order given.
  returned: success
  type: list
  elements: dict
  contains:
    path:
      description: The absolute path of the file.
      type: str
      sample: /home/ops/reports/preflight.json
    state:
      description:
        - V(created), V(updated) (content changed), V(mode) (only the mode changed) or V(unchanged). In check
          mode, what would happen.
      type: str
      sample: updated
directories:
  description: What happened to each directory of the files.
  returned: success
  type: list
  elements: dict
  contains:
    path:
      description: The absolute path of the directory.
      type: str
      sample: /home/ops/reports
    state:
      description:
        - V(created), V(mode) or V(unchanged). In check mode, what would happen.
        - A directory that is a link allowed by O(follow_directory_links) is V(created) or V(unchanged), its mode
          left as it is.
      type: str
      sample: unchanged
removed_temporaries:
  description: The stale temporary files of killed writes of these files that this run removed.
  returned: when one was removed
  type: list
  elements: str
  sample: [/home/ops/reports/.preflight.md.k2j3h4k5]
  version_added: 1.2.0
"""
