# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one redaction of the collection: no secret of a known key family or shape comes out, in clear or base64;
useful non-secrets stay; redaction is idempotent and linear in time."""

from __future__ import annotations

import base64
import json
import string
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import (
    MASK,
    is_secret_key,
    key_words,
    redact,
    redact_text,
    redact_url,
)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


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
    # issue 39 item 8: a "/" in the password, and user:password@host without a scheme
    ("https://u:pa/ss@charts.example.com/nvidia", "https://***@charts.example.com/nvidia"),
    ("https://u:pa?ss#x@charts.example.com/nvidia", "https://***@charts.example.com/nvidia"),
    ("pull from fabric:s3cret@registry.example.com/nvidia", "pull from ***@registry.example.com/nvidia"),
    ("repo=fabric:pa=ss@registry.example.com", "repo=***@registry.example.com"),
    # no password: an ssh remote, an image or chart pinned by digest
    ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ("oci://registry.example.com/charts/gpu-operator@sha256:0123abcd",
     "oci://registry.example.com/charts/gpu-operator@sha256:0123abcd"),
    ("nvcr.io/nvidia/driver:580@sha256:0123abcd", "nvcr.io/nvidia/driver:580@sha256:0123abcd"),
])
def test_urls_lose_their_credentials(text, expected):
    assert redact_url(text) == expected
    assert redact(text) == expected


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1L7V\nAbCdEf0123==\n-----END RSA PRIVATE KEY-----"
KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t
    server: https://10.0.0.1:6443
users:
- name: admin
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=
    token: kube-token-4f2a
    password: kube-pw-4f2a
"""


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("helm failed: password=hunter2 rc=1", "helm failed: password=******** rc=1", id="key=value"),
    pytest.param("registry_password=pw1 ngcApiKey=pw2 secretKey=pw3 client_secret=pw4",
                 "registry_password=******** ngcApiKey=******** secretKey=******** client_secret=********",
                 id="key-families"),
    pytest.param("error: password: hunter2 for admin\nnext line", "error: password: ********\nnext line",
                 id="key: value to the line's end"),
    pytest.param("curl -H 'Authorization: Bearer abc.def-123' https://api", "curl -H 'Authorization: ********' "
                 "https://api", id="authorization-header"),
    pytest.param("sent Bearer eyJhbGc.payload-xyz_1 to the API", "sent Bearer ******** to the API", id="bearer"),
    pytest.param("X-Auth-Token: t0k3n-value", "X-Auth-Token: ********", id="x-auth-token"),
    pytest.param("Authorization=Basic " + b64("fabric:s3cret"), "Authorization=********", id="basic-header"),
    pytest.param("got Basic " + b64("fabric:s3cret") + " back", "got Basic ******** back", id="basic"),
    pytest.param("helm repo add nv https://h --username u --password s3cret --pass-credentials",
                 "helm repo add nv https://h --username u --password ******** --pass-credentials", id="--password x"),
    pytest.param("helm registry login --password=s3cret registry", "helm registry login --password=******** registry",
                 id="--password=x"),
    pytest.param("docker login -u fabric -p s3cret nvcr.io", "docker login -u fabric -p ******** nvcr.io",
                 id="-p x in a login"),
    pytest.param("export NGC_API_KEY=nvapi-abcdefghij0123", "export NGC_API_KEY=********", id="env-assignment"),
    pytest.param("the key is nvapi-abcdefghij0123.", "the key is ********.", id="ngc-key-shape"),
    pytest.param(f"key:\n{PEM}\nafter", "key:\n-----BEGIN RSA PRIVATE KEY-----********-----END RSA PRIVATE KEY-----"
                 "\nafter", id="pem"),
    pytest.param("cut: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhk", "cut: -----BEGIN PRIVATE KEY-----********",
                 id="pem-without-end"),
    pytest.param('{"auths": {"nvcr.io": {"username": "$oauthtoken", "auth": "' + b64("$oauthtoken:s3cret") + '"}}}',
                 '{"auths": ********}', id="docker-config"),
    pytest.param('{"nvcr.io": {"auth": "' + b64("u:s3cret") + '"}}', '{"nvcr.io": {"auth": "********"}}',
                 id="docker-config-auth"),
    pytest.param('stderr: {\\"password\\": \\"s3cret\\", \\"user\\": \\"u\\"}',
                 'stderr: {\\"password\\": \\"********\\", \\"user\\": \\"u\\"}', id="escaped-json"),
    pytest.param("{'token': 'abc', 'name': 'x'}", "{'token': '********', 'name': 'x'}", id="python-repr"),
    pytest.param("env:\n- name: NGC_API_KEY\n  value: s3cret\n- name: LOG_LEVEL\n  value: debug",
                 "env:\n- name: NGC_API_KEY\n  value: ********\n- name: LOG_LEVEL\n  value: debug", id="env-list-yaml"),
    pytest.param('[{"name": "REGISTRY_PASSWORD", "value": "s3cret"}]', '[{"name": "REGISTRY_PASSWORD", "value": '
                 '"********"}]', id="env-list-json"),
    pytest.param("msg: token: abc\\nclient-key-data: xyz\\nserver: https://h",
                 "msg: token: ********\\nclient-key-data: ********\\nserver: https://h", id="escaped-newlines"),
])
def test_secret_shapes_in_text(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected


def test_kubeconfig_text_keeps_the_public_parts():
    out = redact(KUBECONFIG)
    for secret in ("kube-token-4f2a", "kube-pw-4f2a", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo="):
        assert secret not in out
    assert "server: https://10.0.0.1:6443" in out and "- name: admin" in out
    assert "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t" in out
    assert "    token: ********\n    password: ********\n" in out


@pytest.mark.parametrize("text", [
    "author: jane, authority: ca.example.com, oauth_url: https://login.example.com/oauth",
    "tokenizer: /models/llama/tokenizer.json",
    "secretName: gpu-operator-registry imagePullSecrets=[regcred]",
    "failed to read secret: gpu-operator/registry",
    "the password is wrong; the token expired",
    "Basic checks passed",
    "podman run -p 8080:80 nginx",
    "docker login --password-stdin -u fabric nvcr.io",
    "no credentials: https://helm.ngc.nvidia.com/nvidia",
    "password: null\ntoken: true\nauth: ~",
    "CA: " + b64("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
    "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG\n-----END CERTIFICATE-----",
    "driver 580.65.06 on gb200-rack1-tray01: pass 4, warn 0, fail 0",
])
def test_useful_non_secrets_stay(text):
    assert redact(text) == text


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


def test_data_key_families_env_lists_and_nested_secrets():
    values = {
        "registry_password": "pw1", "ngcApiKey": "pw2", "secretKey": "pw3", "client_secret": "pw4",
        "X-Auth-Token": "pw5", "apiKey": 1234, "auth": {"username": "u", "password": "pw6"},
        "driver": {"env": [{"name": "NGC_API_KEY", "value": "pw7"}, {"name": "LOG_LEVEL", "value": "debug"},
                           {"name": "PASSWORD_FILE", "value": "/run/secrets/pw"}],
                   "repoConfig": {"configMapName": "repo"}, "licensingConfig": {"secretName": "nls"}},
        "imagePullSecrets": ["regcred"], "secret": {"name": ""}, "token": "", "password": None, "bearer": False,
        "author": "jane", "tokenizer": "t.json", "oauth_url": "https://login.example.com"}
    assert redact(values) == {
        "registry_password": MASK, "ngcApiKey": MASK, "secretKey": MASK, "client_secret": MASK,
        "X-Auth-Token": MASK, "apiKey": MASK, "auth": {"username": MASK, "password": MASK},
        "driver": {"env": [{"name": "NGC_API_KEY", "value": MASK}, {"name": "LOG_LEVEL", "value": "debug"},
                           {"name": "PASSWORD_FILE", "value": "/run/secrets/pw"}],
                   "repoConfig": {"configMapName": "repo"}, "licensingConfig": {"secretName": "nls"}},
        "imagePullSecrets": ["regcred"], "secret": {"name": ""}, "token": "", "password": None, "bearer": False,
        "author": "jane", "tokenizer": "t.json", "oauth_url": "https://login.example.com"}


@pytest.mark.parametrize("key", [
    "password", "PASSWORD", "passwd", "registry_password", "Registry-Password", "ngc_api_key", "ngcApiKey",
    "NGC_API_KEY", "apikey", "APIKey", "secretKey", "client_secret", "clientSecret", "aws_secret_access_key",
    "X-Auth-Token", "accessToken", "id-token", "refresh_token", "authtoken", "token", " token ", "auth", "auths",
    "Authorization", "credentials", "credential", "private_key", "privateKey", "client_key_data", "client-key-data",
    "client-certificate-data", ".dockerconfigjson", "bearer", "passphrase", "--password", "pullSecret",
])
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", [
    "username", "server", "passwords_file", "author", "authority", "oauth_url", "tokenizer", "secretName",
    "secretNames", "imagePullSecrets", "secretKeyRef", "password-stdin", "tokenPath", "secretEnv", "keyring",
    "topologyKey", "key", "monkey", "name", "", 3, None,
])
def test_not_secret_keys(key):
    assert not is_secret_key(key)


def test_key_words():
    assert key_words("ngcApiKey") == ["ngc", "api", "key"]
    assert key_words("X-Auth-Token") == ["x", "auth", "token"]
    assert key_words("APIKey") == ["api", "key"]
    assert key_words(".dockerconfigjson") == ["dockerconfigjson"]


SAFE = string.ascii_letters + string.digits + "-._~!$&()*+,;=%"


@settings(max_examples=200, deadline=None)
@given(before=st.text(max_size=40), after=st.text(max_size=40),
       user=st.text(SAFE, min_size=1, max_size=12), password=st.text(SAFE + "@:/?#", min_size=6, max_size=24),
       scheme=st.sampled_from(["http", "https", "oci", "git+ssh"]))
def test_no_password_survives_in_any_text(before, after, user, password, scheme):
    text = f"{before} {scheme}://{user}:{password}@host.example/path {after}"
    out = redact(text)
    assert f"{user}:{password}@" not in out
    assert f":{password}@" not in out
    if not is_secret_key(user):
        # A user that is itself a secret key word ("Token", found by this property) is masked as "Token: <value>",
        # with the rest of the URL: more is hidden, never less; any other user leaves the URL's userinfo form.
        assert f"{scheme}://***@host.example/path" in out
    assert redact(out) == out  # idempotent


# Secrets are drawn with a "Z" in them and the surrounding text without one, so a secret can only be in the output
# if the redaction let it through. They start with a letter or digit: "--password -u" is a flag without its value.
SECRET_ALPHABET = string.ascii_letters.replace("Z", "") + string.digits + "-._~+/"
SECRETS = st.builds(lambda first, head, tail: first + head + "Z" + tail,
                    st.sampled_from(string.ascii_letters.replace("Z", "") + string.digits),
                    st.text(SECRET_ALPHABET, min_size=4, max_size=16),
                    st.text(SECRET_ALPHABET, min_size=5, max_size=16))
NOISE = st.text(st.characters(blacklist_characters="Z", blacklist_categories=("Cs",)), max_size=40)
# Every shape a secret takes in a message, a helm error, a kubeconfig, a docker config or a command line.
SHAPES = [
    lambda s: f"password={s}",
    lambda s: f"registry_password: {s}",
    lambda s: f'"ngcApiKey": "{s}"',
    lambda s: f"{{'client_secret': '{s}'}}",
    lambda s: f"--password {s}",
    lambda s: f"--password={s}",
    lambda s: f"export NGC_API_KEY={s}",
    lambda s: f"X-Auth-Token: {s}",
    lambda s: f"Authorization: Bearer {s}",
    lambda s: f"sent Bearer {s} to the API",
    lambda s: f"https://fabric:{s}@charts.example.com/nvidia",
    lambda s: f"oci://{s}@registry.example.com/charts",
    lambda s: f"robot:{s}@registry.example.com/nvidia",
    lambda s: f"Basic {b64('fabric:' + s)}",
    lambda s: f"-----BEGIN EC PRIVATE KEY-----\n{s}\n-----END EC PRIVATE KEY-----",
    lambda s: f"users:\n- name: admin\n  user:\n    token: {s}\n",
    lambda s: f"client-key-data: {b64('-----BEGIN RSA PRIVATE KEY-----' + s + '-----END RSA PRIVATE KEY-----')}",
    lambda s: json.dumps({"auths": {"nvcr.io": {"auth": b64("$oauthtoken:" + s)}}}),
    lambda s: b64(json.dumps({"auths": {"nvcr.io": {"password": s}}})),
    lambda s: f"- name: NGC_API_KEY\n  value: {s}",
    lambda s: json.dumps({"name": "REGISTRY_TOKEN", "value": s}),
    lambda s: json.dumps({"msg": f"kubeconfig:\nusers:\n- user:\n    client-key-data: {s}\n"}),
    lambda s: f"docker login -u fabric -p {s} nvcr.io",
]


def forms(secret: str) -> list[str]:
    """The secret in clear and in base64, as it or as a user's password."""
    return [secret, b64(secret), b64("fabric:" + secret), b64("$oauthtoken:" + secret)]


@settings(max_examples=300, deadline=None)
@given(before=NOISE, after=NOISE, secret=SECRETS, shape=st.sampled_from(range(len(SHAPES))),
       sep=st.sampled_from([" ", "\n", "; "]))
def test_property_a_secret_shaped_value_in_any_text_is_hidden(before, after, secret, shape, sep):
    out = redact(f"{before}{sep}{SHAPES[shape](secret)}{sep}{after}")
    for form in forms(secret):
        assert form not in out
    assert redact(out) == out


KEYS = st.sampled_from(["password", "registry_password", "ngcApiKey", "secretKey", "client_secret", "X-Auth-Token",
                        "token", "auth", "client-key-data", ".dockerconfigjson", "apiKey", "privateKey", "credentials"])
DATA = st.recursive(st.none() | st.booleans() | st.integers() | NOISE,
                    lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.text(st.characters(blacklist_characters="Z"), max_size=10), children,
                                      max_size=3), max_leaves=12)


@st.composite
def data_with_a_secret(draw):
    """Random data with a secret placed somewhere: under a secret key, as an env list's value, or in a text shape."""
    secret = draw(SECRETS)
    kind = draw(st.sampled_from(["key", "nested", "env", "text"]))
    if kind == "key":
        item = {draw(KEYS): secret}
    elif kind == "nested":
        item = {draw(KEYS): {"username": "fabric", "value": [secret]}}
    elif kind == "env":
        item = [{"name": draw(st.sampled_from(["NGC_API_KEY", "REGISTRY_PASSWORD", "HF_TOKEN"])), "value": secret}]
    else:
        item = SHAPES[draw(st.sampled_from(range(len(SHAPES))))](secret)
    value = item
    for _level in range(draw(st.integers(0, 3))):
        siblings = draw(st.dictionaries(st.text(st.characters(blacklist_characters="Z"), max_size=8), DATA,
                                        max_size=2))
        value = draw(st.sampled_from([{**siblings, "values": value}, [value, *siblings.values()]]))
    return value, secret


@settings(max_examples=300, deadline=None)
@given(data_with_a_secret())
def test_property_a_secret_in_any_structure_is_hidden(drawn):
    value, secret = drawn
    out = redact(value)
    for form in forms(secret):
        assert form not in repr(out)
    assert redact(out) == out


@settings(max_examples=200, deadline=None)
@given(DATA)
def test_any_data_keeps_its_shape(value):
    out = redact(value)
    if isinstance(value, dict):
        assert isinstance(out, dict) and set(out) == {redact(key) for key in value}
    elif isinstance(value, list):
        assert isinstance(out, list) and len(out) == len(value)
    else:
        assert out.__class__ is value.__class__
    assert redact(out) == out


# Pieces of every shape, glued at random: the redaction of any such text is stable (redact(redact(x)) == redact(x)).
PIECES = st.sampled_from([
    "password", "token", "NGC_API_KEY", "name", "value", "=", ":", ": ", " ", "\n", "\\n", '"', "'", "\\", "\\\"",
    "{", "}", "[", "]", ",", "https://", "oci://", "@", "u:p", "host.example", "/", "Bearer ", "Basic ",
    b64("u:p"), "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "--password ", "-p ", "login",
    "eyJhbGciOi", ".", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t", "nvapi-abcdefgh12", "sha256:", "abc123", "- ", "***",
    MASK, "secret", "credentials", "auth", "Authorization",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join))
def test_property_idempotent_on_any_mix_of_shapes(text):
    out = redact_text(text)
    assert redact_text(out) == out


@settings(max_examples=100, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=8).map("".join), st.text(max_size=20))
def test_property_random_input_finishes_fast(piece, noise):
    """Any text, however its shapes repeat, is redacted in time linear in its size (no backtracking blow-up)."""
    text = (piece + noise) * (20_000 // (len(piece) + len(noise)) + 1)
    started = time.process_time()
    redact_text(text)
    assert time.process_time() - started < 2.0


@pytest.mark.parametrize("piece", [
    "a.", "eyJ", "eyJa.", "-----BEGIN ", "password=", "password: ", "@", ":", "https://", "\\\"", "a:b@",
    "name: NGC_API_KEY\n", "name: x ", "{", "Bearer ", "Basic ", "A", "x ", "--password ", "-p ", "\\n",
    "'password': '",
])
def test_long_repetitions_finish_fast(piece):
    text = piece * (200_000 // len(piece))
    started = time.process_time()
    redact(text)
    assert time.process_time() - started < 3.0


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
    markdown = report_markdown.validation_markdown({"failures": ["RDMA: helm --password s3cr3t-pw failed"]})
    assert "s3cr3t" not in markdown
