# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE, not NVIDIA's tool: a stand-in for ``mlnx_qos`` installed by the rdma_network scenario's prepare.

The scenario has no ConnectX hardware, so this script takes the vendor tool's place on one host
(/usr/local/sbin/mlnx_qos): it appends every command line to /var/log/gpufabric-test-fixture-mlnx_qos.log,
keeps the trust mode and PFC flags per netdev under /var/lib/gpufabric-test-fixture-mlnx_qos/ (a NIC starts with
trust pcp and no PFC), applies ``-i <netdev> [--trust dscp|pcp] [--pfc f0,...,f7]`` to that state and prints it
in the layout of ``mlnx_qos -i`` (MLNX_OFED documentation), as far as the role reads it.
prepare.yml installs it with a ``#!/usr/bin/python3`` line in front.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

LOG = "/var/log/gpufabric-test-fixture-mlnx_qos.log"
STATE = "/var/lib/gpufabric-test-fixture-mlnx_qos"


def main():
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(shlex.join(sys.argv[1:]) + "\n")
    parser = argparse.ArgumentParser(prog="mlnx_qos")
    parser.add_argument("-i", "--interface", required=True)
    parser.add_argument("--trust", choices=["pcp", "dscp"])
    parser.add_argument("--pfc")
    args = parser.parse_args()
    if not os.path.isdir(f"/sys/class/net/{args.interface}"):
        sys.exit(f"Netlink error: no such interface {args.interface}")
    os.makedirs(STATE, exist_ok=True)
    path = os.path.join(STATE, args.interface + ".json")
    state = {"trust": "pcp", "pfc": [0] * 8}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    if args.trust:
        state["trust"] = args.trust
    if args.pfc:
        flags = [int(flag) for flag in args.pfc.split(",")]
        if len(flags) != 8 or set(flags) - {0, 1}:
            sys.exit("--pfc takes 8 comma-separated 0/1 flags")
        state["pfc"] = flags
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
    flags = "   ".join(str(flag) for flag in state["pfc"])
    print("DCBX mode: OS controlled")
    print(f"Priority trust state: {state['trust']}")
    print("PFC configuration:")
    print("        priority    0   1   2   3   4   5   6   7")
    print(f"        enabled     {flags}")


if __name__ == "__main__":
    main()
