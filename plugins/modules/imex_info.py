#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: imex_info
version_added: 1.0.0
short_description: Report the NVIDIA IMEX daemon of a host and the state of its IMEX domain
description:
  - Reports whether C(nvidia-imex) is installed (dpkg status, else C(rpm), else C(nvidia-imex --version)),
    the state of C(nvidia-imex.service) (enabled, active, masked), the parsed C(/etc/nvidia-imex/config.cfg),
    the validated nodes file, the IMEX channel devices and, while the service is active, the domain as
    C(nvidia-imex-ctl -N -j) reports it (the text form of C(nvidia-imex-ctl -N) when JSON is not available).
  - The service state comes from one C(systemctl show) call (its state, since when, its last result, exit status and
    automatic restarts); without C(systemctl) below O(root), or when it fails, it is read from the unit files (a link
    to C(/dev/null) is a mask, a C(*.wants) link is an enablement) and RV(service.active) is V(null).
  - The nodes file is the one C(IMEX_NODE_CONFIG_FILE) names in C(config.cfg), by default
    C(/etc/nvidia-imex/nodes_config.cfg). It must list one IP address per line, each once, and be identical on every
    node of the domain; host names are not accepted.
  - Malformed lines of C(config.cfg), unreadable files and failing tools are named in RV(errors); the settings that
    could be parsed are still returned and the task does not fail. An invalid nodes file is reported as a warning.
    Malformed lines are named by number, never by their text.
  - No text of C(config.cfg), the nodes file or the dpkg status file is returned as read, in the result or in a
    message, unless it has a documented shape - a setting's value of the shape RV(config) documents for its key, a
    nodes file entry as a canonical IP address, a package version as a version string. A value of another shape
    is named by its path, key and line number.
  - "C(config.cfg) and the nodes file are read up to 1 MiB each (a nodes file of a few thousand addresses is a few
    dozen KiB), the dpkg status file up to 32 MiB; a larger file is not read (only 1 byte more than the limit is
    ever read) and is named in RV(errors) as C(<path>: larger than the limit of <n> bytes)."
  - "The nodes file path read from C(config.cfg) is resolved inside O(root) like every other path; one that leads
    outside is reported as C(<path>: outside root) and not read."
  - RV(control) reports the command service of C(config.cfg) (C(IMEX_CMD_ENABLED), C(IMEX_CMD_UNIX_DOMAIN_PATH)) and,
    when it is on with an absolute socket path and the service is active, what C(nvidia-imex-ctl -q --u=<socket path>)
    answers - the check the DRA driver 0.5 makes in its host-managed IMEX mode before it hands out channel 0.
author: gpufabric.cluster contributors (@gpufabric)
extends_documentation_fragment:
  - gpufabric.cluster.probe
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.actiongroups
attributes:
  check_mode:
    support: full
    details: The module only reads; it returns the same result in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
  action_group:
    support: full
    membership:
      - gpufabric.cluster.probes
notes:
  - Runs C(systemctl show), C(nvidia-imex --version) or C(rpm -qa), C(nvidia-imex-ctl -N -j) and
    C(nvidia-imex-ctl -q --u=<socket path>), all read-only, and only when they exist below O(root).
seealso:
  - name: NVIDIA IMEX guide
    description: Configuration file, nodes file and C(nvidia-imex-ctl) reference.
    link: https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/
"""

EXAMPLES = r"""
- name: Read the IMEX state of the host
  gpufabric.cluster.imex_info:
  register: imex

- name: Require a healthy IMEX domain on NVL72 compute trays
  ansible.builtin.assert:
    that:
      - imex.installed
      - imex.service.active
      - imex.nodes.valid
      - imex.domain.status == 'UP'
      - imex.domain.not_connected | length == 0
    fail_msg: "IMEX not ready: {{ imex.errors + [imex.domain.not_connected | default([])] }}"

- name: Show the nodes that are not READY
  ansible.builtin.debug:
    msg: "{{ imex.domain.nodes | rejectattr('status', '==', 'READY') | map(attribute='host') | list }}"
  when: imex.domain is not none

- name: Require the host daemon READY on its control socket (the DRA driver's host-managed IMEX mode)
  ansible.builtin.assert:
    that:
      - imex.service.active
      - imex.control.enabled
      - imex.control.socket_path == '/etc/nvidia-imex/imex_ctrl.sock'
      - imex.control.ready
    fail_msg: "host IMEX not ready for hostManaged mode: {{ imex.control.reason }}"
- name: Inspect a recorded copy of another host
  gpufabric.cluster.imex_info:
    root: /srv/recorded/gpu-node-07
"""

RETURN = r"""
installed:
  description: Whether nvidia-imex is installed (a package, or an C(nvidia-imex) binary below O(root)).
  returned: always
  type: bool
  sample: true
package:
  description: The installed package, C(nvidia-imex) or branch-suffixed C(nvidia-imex-<branch>); V(null) when none.
  returned: always
  type: str
  sample: nvidia-imex-570
version:
  description:
    - The package version; the version C(nvidia-imex --version) prints when there is no package.
    - V(null) when not installed or unknown, or when the package's version is not a version string (a letter or
      digit, then letters, digits and C(.+~:_-), at most 64 characters, at least one digit; then named in
      RV(errors)).
  returned: always
  type: str
  sample: 570.172.08-1
service:
  description: State of C(nvidia-imex.service).
  returned: always
  type: dict
  contains:
    exists:
      description: Whether systemd knows the unit (a masked unit exists).
      returned: always
      type: bool
      sample: true
    enabled:
      description: Whether the unit is enabled (C(UnitFileState) starts with C(enabled), or a C(*.wants) link exists).
      returned: always
      type: bool
      sample: true
    active:
      description: Whether the service runs (C(ActiveState=active)); V(null) when read from unit files only.
      returned: always
      type: bool
      sample: true
    masked:
      description:
        - Whether the unit is masked (linked to C(/dev/null)), as the C(dra) mode of the nvidia_imex role wants.
      returned: always
      type: bool
      sample: false
    unit_file_state:
      description: C(UnitFileState) (C(enabled), C(disabled), C(masked), ...); V(null) when the unit does not exist.
      returned: always
      type: str
      sample: enabled
    active_state:
      description: C(ActiveState) (C(active), C(inactive), C(failed), ...); V(null) when read from unit files only.
      returned: always
      type: str
      sample: active
    sub_state:
      description: C(SubState) (C(running), C(dead), C(failed), C(auto-restart), ...); V(null) when read from unit
        files only.
      returned: always
      type: str
      sample: running
    since:
      description:
        - When the unit entered its present state, as systemd prints a timestamp (C(StateChangeTimestamp), else
          C(ActiveEnterTimestamp) of an active unit or C(InactiveEnterTimestamp) of another).
        - V(null) when the unit is not installed, read from unit files only, never changed state, or the timestamp is
          not in systemd's form.
      returned: always
      type: str
      sample: Sat 2026-11-28 06:08:10 UTC
    result:
      description:
        - The unit's last C(Result) (C(success), C(exit-code), C(signal), C(core-dump), C(timeout),
          C(start-limit-hit), ...); what ended its last run when it failed.
        - V(null) when the unit is not installed or read from unit files only.
      returned: always
      type: str
      sample: exit-code
    exit_status:
      description: C(ExecMainStatus), the exit status (or signal number) of the main process of its last run; V(null)
        when the unit is not installed or read from unit files only.
      returned: always
      type: int
      sample: 1
    restarts:
      description: C(NRestarts), how often systemd restarted it on its own (C(Restart=)) since it was last started;
        V(null) when the unit is not installed, read from unit files only, or systemd is older than 235.
      returned: always
      type: int
      sample: 0
config_path:
  description: Host path of the IMEX configuration file read.
  returned: always
  type: str
  sample: /etc/nvidia-imex/config.cfg
config:
  description:
    - The C(KEY=VALUE) settings of RV(config_path) that nvidia-imex knows (the keys of the C(config.cfg) its package
      installs); V(null) when the file does not exist. Settings of other keys are left out, and malformed lines are
      skipped and named in RV(errors).
    - Each value is returned as written (trimmed) when it is empty or has the shape nvidia-imex documents for its
      key - an integer (C(LOG_LEVEL), C(SERVER_PORT), C(IMEX_CMD_ENABLED) and the other counts, ports and
      seconds); an IP address (C(BIND_INTERFACE_IP), C(IMEX_CMD_BIND_INTERFACE_IP)); an absolute path of letters,
      digits, space and C(._+,:@=~/-) (C(LOG_FILE_NAME), C(STATS_FILE_NAME), C(IMEX_NODE_CONFIG_FILE),
      C(IMEX_CMD_UNIX_DOMAIN_PATH)); such a path or an environment variable name (the C(IMEX_SERVER_*) and
      C(IMEX_CLIENT_*) key, certificate and authority settings); an interface name (C(NETWORK_INTERFACE)); one of
      C(NONE), C(RECOVERY) (C(IMEX_WAIT_FOR_QUORUM)), of C(SSL_TLS), C(GSS_AUTH_ENCRYPT), C(GSS_AUTH_ONLY)
      (C(IMEX_AUTH_ENCRYPTION_MODE)), of C(FILE), C(ENV_PATH), C(ENV_VAL) (C(IMEX_AUTH_SOURCE)); a host name
      (C(IMEX_SECURITY_TARGET_OVERRIDE)); a service principal name of letters, digits and C(_.@/-)
      (C(IMEX_GSS_SERVICE_NAME)).
    - "A value of another shape is V(null), and RV(errors) names its line and key (C(<path>: line <n>: <KEY> is not
      an integer)), never the value. An C(IMEX_NODE_CONFIG_FILE) of another shape leaves RV(nodes) V(null)."
  returned: always
  type: dict
  sample:
    IMEX_NODE_CONFIG_FILE: /etc/nvidia-imex/nodes_config.cfg
    SERVER_PORT: "50000"
    IMEX_CMD_PORT: "50005"
nodes:
  description: The validated nodes file; V(null) when it does not exist.
  returned: always
  type: dict
  contains:
    path:
      description: Host path of the nodes file (C(IMEX_NODE_CONFIG_FILE) or C(/etc/nvidia-imex/nodes_config.cfg)).
      returned: always
      type: str
      sample: /etc/nvidia-imex/nodes_config.cfg
    addresses:
      description: Every IP address entry in file order, stripped, in canonical form (a repeated one appears each time).
      returned: always
      type: list
      elements: str
      sample: ["10.114.0.11", "10.114.0.12"]
    duplicates:
      description: Addresses listed more than once, each once, in address order.
      returned: always
      type: list
      elements: str
      sample: ["10.0.0.2"]
    invalid:
      description:
        - Entries that are not IP addresses (host names, garbage), by line number; their text is never returned.
      returned: always
      type: list
      elements: dict
      contains:
        line:
          description: Line number in the file, from 1.
          returned: always
          type: int
          sample: 6
    blank_or_comment:
      description: Number of blank and C(#) comment lines.
      returned: always
      type: int
      sample: 1
    valid:
      description: True when there is at least one address, no duplicate and no invalid entry.
      returned: always
      type: bool
      sample: true
channels:
  description: IMEX channel devices.
  returned: always
  type: dict
  contains:
    supported:
      description: Whether the driver registered the C(nvidia-caps-imex-channels) character device in C(/proc/devices).
      returned: always
      type: bool
      sample: true
    devices:
      description: Sorted entries of C(/dev/nvidia-caps-imex-channels).
      returned: always
      type: list
      elements: str
      sample: ["channel0"]
domain:
  description:
    - The IMEX domain as the local daemon sees it, from C(nvidia-imex-ctl -N -j) or its text form.
    - V(null) when the service is not active or C(nvidia-imex-ctl) failed (then named in RV(errors)).
  returned: always
  type: dict
  contains:
    status:
      description: Domain state, normally C(UP), C(DOWN) or C(DEGRADED); V(null) when not printed.
      returned: always
      type: str
      sample: UP
    timestamp:
      description: The timestamp C(nvidia-imex-ctl) printed, as printed.
      returned: always
      type: str
      sample: 11/22/2026 06:08:10.580
    nodes:
      description: The nodes of the domain, by index.
      returned: always
      type: list
      elements: dict
      contains:
        index:
          description: Node index (line of the nodes file, from 0).
          returned: always
          type: int
          sample: 0
        host:
          description: IP address of the node.
          returned: always
          type: str
          sample: 10.114.0.11
        status:
          description: Node state (C(READY), C(UNAVAILABLE), ...).
          returned: always
          type: str
          sample: READY
        version:
          description: IMEX version of the node; V(null) when not printed.
          returned: always
          type: str
          sample: 570.172.08
        local:
          description: Whether this is the local node (C(*) in the text form); V(null) from JSON, which does not say.
          returned: always
          type: bool
          sample: true
    connections:
      description:
        - Connection state from each node (key, index as a string) to each node (inner key), in full words
          (C(CONNECTED), C(NEVER_CONNECTED), C(INVALID), C(RECOVERING), C(DISCONNECTED), C(AUTHENTICATING),
          C(VERSION_MISMATCH), C(NODE_MAP_MISMATCH)); the text form's letters are translated.
        - Pairs elided in the text form (C(...)) are absent.
      returned: always
      type: dict
      sample: {"0": {"0": "CONNECTED", "1": "CONNECTED"}, "1": {"0": "CONNECTED", "1": "CONNECTED"}}
    not_connected:
      description:
        - "C([from, to]) index pairs present in RV(domain.connections) whose state is not C(CONNECTED), sorted."
      returned: always
      type: list
      elements: list
      sample: [[0, 3], [3, 0]]
    source:
      description: Which output was parsed, C(json) or C(text).
      returned: always
      type: str
      sample: json
control:
  description:
    - The IMEX command service (C(nvidia-imex-ctl)'s server side) and whether the daemon answers READY on its Unix
      domain socket, as the DRA driver's host-managed IMEX mode requires.
  returned: always
  type: dict
  contains:
    enabled:
      description:
        - Whether C(IMEX_CMD_ENABLED) is C(1) (surrounding whitespace trimmed, so C("1 ") counts).
        - V(false) for C(0), empty or absent, and for any other value (C(true), C(yes), C(01)), which nvidia-imex does
          not document; such a value is also named in a warning (the key, not the value).
      returned: always
      type: bool
      sample: true
    socket_path:
      description:
        - C(IMEX_CMD_UNIX_DOMAIN_PATH) trimmed (inner spaces kept) when it is an absolute path of letters, digits,
          space and C(._+,:@=~/-); V(null) when absent, empty or of another shape (then RV(control.reason) says so
          when the command service is on).
      returned: always
      type: str
      sample: /etc/nvidia-imex/imex_ctrl.sock
    ready:
      description:
        - V(true) when C(nvidia-imex-ctl -q --u=<socket path>) exits 0 and prints exactly C(READY); V(false) when it
          prints another state, prints nothing, fails or does not answer in time (RV(control.reason) says which).
        - V(null) when the daemon was not asked - the command service is off, no or a relative socket path, no
          C(nvidia-imex-ctl) below O(root), or the service is not active (or its state is unknown).
      returned: always
      type: bool
      sample: true
    status:
      description:
        - What the query printed, trimmed, as printed (the daemon state, C(READY), C(INITIALIZING),
          C(WAITING_FOR_PEERS), C(UNAVAILABLE)...), cut to 200 characters; V(null) when not asked or nothing printed.
      returned: always
      type: str
      sample: READY
    reason:
      description: Why RV(control.ready) is V(null) or V(false), in words; V(null) when ready.
      returned: always
      type: str
      sample: "the daemon answered 'WAITING_FOR_PEERS', not READY"
errors:
  description: What could not be read or parsed, each naming the path or tool and the reason. Empty on a healthy host.
  returned: always
  type: list
  elements: str
  sample:
    - "/etc/nvidia-imex/config.cfg: not KEY=VALUE: line 3"
    - "/etc/nvidia-imex/config.cfg: line 9: SERVER_PORT is not an integer"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.cluster.plugins.module_utils import probe_module
from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import collect_imex


def main() -> None:
    """Run the module."""
    module = AnsibleModule(
        argument_spec=probe_module.argument_spec(),
        supports_check_mode=True,
    )
    root, runner = probe_module.start(module)
    payload = collect_imex(root, runner)
    for warning in payload.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, **payload)


if __name__ == "__main__":
    main()
