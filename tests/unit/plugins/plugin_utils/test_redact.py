# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one redaction of the collection: URLs' credentials and the values of secret keys never come out."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import MASK, is_secret_key, redact, redact_url


@pytest.mark.parametrize(("text", "expected"), [
    ("https://fabric:s3cret@charts.example.com/nvidia", "https://***@charts.example.com/nvidia"),
    ("helm: looks like \"https://u:p@h.example/c\" is not a valid chart repository",
     "helm: looks like \"https://***@h.example/c\" is not a valid chart repository"),
    ("token as user https://ghp_abc123@host/x?y=1#z", "token as user https://***@host/x?y=1#z"),
    ("a password with an @: https://user:p@ss@host:8443/charts", "a password with an @: https://***@host:8443/charts"),
    ("oci://robot$ci:tok@registry.example.com/charts/gpu-operator",
     "oci://***@registry.example.com/charts/gpu-operator"),
    ("two: http://a:b@one/ and 'http://c:d@two'", "two: http://***@one/ and 'http://***@two'"),
    ("no credentials: https://helm.ngc.nvidia.com/nvidia", "no credentials: https://helm.ngc.nvidia.com/nvidia"),
    ("mail root@example.com at 10:00", "mail root@example.com at 10:00"),
    ("", ""),
])
def test_urls_lose_their_credentials(text, expected):
    assert redact_url(text) == expected
    assert redact(text) == expected


def test_data_secret_keys_masked_and_strings_redacted():
    user = {"client-key-data": "LS0tS0VZ", "token": "abc", "username": "admin"}
    kubeconfig = {"apiVersion": "v1", "users": [{"name": "admin", "user": user}],
                  "clusters": [{"cluster": {"server": "https://x:y@10.0.0.1:6443"}}]}
    assert redact(kubeconfig) == {
        "apiVersion": "v1", "users": [{"name": "admin", "user": {"client-key-data": MASK, "token": MASK,
                                                                 "username": "admin"}}],
        "clusters": [{"cluster": {"server": "https://***@10.0.0.1:6443"}}]}
    assert redact({"server": "r.example.com", "username": "u", "password": "p", "Registry_Password": None}) == {
        "server": "r.example.com", "username": "u", "password": MASK, "Registry_Password": None}
    assert redact(("a", 1, None, 2.5, True)) == ["a", 1, None, 2.5, True]
    assert redact(7) == 7


@pytest.mark.parametrize("key", ["password", "PASSWORD", "client_key_data", ".dockerconfigjson", " token "])
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["username", "server", "passwords_file", 3, None])
def test_not_secret_keys(key):
    assert not is_secret_key(key)


SAFE = string.ascii_letters + string.digits + "-._~!$&()*+,;=%"


@settings(max_examples=200, deadline=None)
@given(before=st.text(max_size=40), after=st.text(max_size=40),
       user=st.text(SAFE, min_size=1, max_size=12), password=st.text(SAFE + "@:", min_size=6, max_size=24),
       scheme=st.sampled_from(["http", "https", "oci", "git+ssh"]))
def test_no_password_survives_in_any_text(before, after, user, password, scheme):
    text = f"{before} {scheme}://{user}:{password}@host.example/path {after}"
    out = redact(text)
    assert f"{scheme}://***@host.example/path" in out
    assert f"{user}:{password}@" not in out
    assert redact(out) == out  # idempotent


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(st.text(max_size=10), children, max_size=4), max_leaves=20))
def test_any_data_keeps_its_shape(value):
    out = redact(value)
    if isinstance(value, dict):
        assert isinstance(out, dict) and set(out) == {redact(key) for key in value}
    elif isinstance(value, list):
        assert isinstance(out, list) and len(out) == len(value)
    else:
        assert out.__class__ is value.__class__
        if "@" not in repr(value):
            assert out == value


def test_the_reports_redact_every_text():
    from ansible_collections.gpufabric.cluster.plugins.plugin_utils import report_html, report_markdown

    url = "https://fabric:s3cr3t-pw@charts.example.com/nvidia"
    markdown = report_markdown.validation_markdown({"failures": [f"RDMA: {url} unreachable"]})
    assert markdown == ("# gpufabric.cluster validation: FAIL\n\n"
                        "- failed: RDMA: https://***@charts.example.com/nvidia unreachable\n")
    rdma = [{"pair": "a-b", "rail": 0, "memory": "host", "verdict": {
        "status": "fail", "best_average_gbps": None, "line_rate_gbps": 400, "reasons": [f"no output from {url}"]}}]
    page = report_html.validation_report_html({"rdma": rdma})
    assert "no output from https://***@charts.example.com/nvidia" in page
    assert "s3cr3t" not in page
