# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""manifest_for_server_side_apply: an aggregated ClusterRole's rules are the control plane's, not the manifest's."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.manifest_for_server_side_apply import (
    manifest_for_server_side_apply,
)

SHARED = pathlib.Path(__file__).resolve().parents[4] / ".." / "shared"
MPI_OPERATOR = SHARED / "manifests" / "mpi-operator-v0.6.0.yaml"

AGGREGATED = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "kubeflow-mpijobs-admin"},
    "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate": "true"}}]},
    "rules": [],
}
PLAIN_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "kubeflow-mpijobs-edit"},
    "rules": [{"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["get"]}],
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mpi-operator"}}


def test_an_aggregated_cluster_role_loses_its_rules_and_nothing_else():
    objects = manifest_for_server_side_apply([NAMESPACE, AGGREGATED, PLAIN_ROLE])
    expected = copy.deepcopy(AGGREGATED)
    del expected["rules"]
    assert objects == [NAMESPACE, expected, PLAIN_ROLE]


def test_non_empty_rules_of_an_aggregated_role_go_too():
    role = dict(AGGREGATED, rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    assert "rules" not in manifest_for_server_side_apply([role])[0]


def test_a_role_of_another_api_group_or_an_empty_aggregation_rule_keeps_its_rules():
    other = dict(AGGREGATED, apiVersion="example.com/v1")
    no_rule = dict(AGGREGATED, aggregationRule=None)
    assert manifest_for_server_side_apply([other, no_rule]) == [other, no_rule]


def test_the_input_is_not_changed():
    documents = [copy.deepcopy(AGGREGATED)]
    manifest_for_server_side_apply(documents)
    assert documents == [AGGREGATED]


def test_empty_documents_are_left_out():
    assert manifest_for_server_side_apply([None, NAMESPACE, None]) == [NAMESPACE]


@pytest.mark.parametrize("text", ["", "---\n", "---\n---\n", "# only a comment\n"])
def test_an_empty_or_truncated_manifest_file_is_refused(text):
    documents = list(yaml.safe_load_all(text))
    with pytest.raises(AnsibleFilterError) as error:
        manifest_for_server_side_apply(documents)
    assert str(error.value) == ("manifest_for_server_side_apply: the manifest holds no Kubernetes object "
                                "(an empty or truncated file?)")


def test_a_manifest_cut_inside_an_object_is_refused_naming_the_document():
    text = MPI_OPERATOR.read_text(encoding="utf-8")
    cut = text[: text.index("kind: ClusterRole")]  # the last document ends before its kind
    documents = list(yaml.safe_load_all(cut))
    with pytest.raises(AnsibleFilterError, match=rf"^manifest_for_server_side_apply: document {len(documents)} has no "
                                                 r"kind \(a non-empty string\)$"):
        manifest_for_server_side_apply(documents)


def test_the_real_mpi_operator_manifest():
    documents = list(yaml.safe_load_all(MPI_OPERATOR.read_text(encoding="utf-8")))
    objects = manifest_for_server_side_apply(documents)
    assert len(objects) == len([d for d in documents if d is not None])
    admin = [o for o in objects if o["metadata"]["name"] == "kubeflow-mpijobs-admin"]
    assert len(admin) == 1 and "rules" not in admin[0] and admin[0]["aggregationRule"]
    # the other ClusterRoles (their rules are the manifest's) and the CRD are untouched
    changed = [o for o, d in zip(objects, [d for d in documents if d is not None], strict=True) if o != d]
    assert changed == admin


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ("kind: Namespace", "the input must be the list of a manifest's documents, got str"),
        (NAMESPACE, "the input must be the list of a manifest's documents, got dict"),
        (None, "the input must be the list of a manifest's documents, got NoneType"),
        (7, "the input must be the list of a manifest's documents, got int"),
        ([NAMESPACE, "kind: Namespace"], "document 2 is not a Kubernetes object: got str"),
        ([["a"]], "document 1 is not a Kubernetes object: got list"),
        ([{"kind": "Namespace"}], "document 1 has no apiVersion (a non-empty string)"),
        ([{"apiVersion": "v1", "kind": ""}], "document 1 has no kind (a non-empty string)"),
        ([{"apiVersion": "v1", "kind": 5}], "document 1 has no kind (a non-empty string)"),
        ([None, {"apiVersion": True, "kind": "Namespace"}], "document 2 has no apiVersion (a non-empty string)"),
    ],
)
def test_what_is_not_a_manifest_is_refused_naming_the_document(documents, message):
    with pytest.raises(AnsibleFilterError, match=r"^manifest_for_server_side_apply: ") as error:
        manifest_for_server_side_apply(documents)
    assert str(error.value) == f"manifest_for_server_side_apply: {message}"


_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_value = st.recursive(
    _scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
_document = st.one_of(
    _value,
    st.fixed_dictionaries(
        {"apiVersion": st.sampled_from(["v1", "rbac.authorization.k8s.io/v1", "apps/v1", ""]),
         "kind": st.sampled_from(["ClusterRole", "Namespace", "Role", ""])},
        optional={"aggregationRule": _value, "rules": _value, "metadata": _value},
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_document, max_size=6))
def test_any_documents_give_the_objects_or_a_clear_error(documents):
    before = copy.deepcopy(documents)
    try:
        objects = manifest_for_server_side_apply(documents)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("manifest_for_server_side_apply: document ") or (
            all(document is None for document in documents) and "holds no Kubernetes object" in str(exc))
        return
    finally:
        assert documents == before
    kept = [d for d in documents if d is not None]
    assert len(objects) == len(kept)
    for obj, document in zip(objects, kept, strict=True):
        aggregated = (document["kind"] == "ClusterRole"
                      and document["apiVersion"].startswith("rbac.authorization.k8s.io/")
                      and document.get("aggregationRule") is not None)
        expected = {k: v for k, v in document.items() if not (aggregated and k == "rules")}
        assert obj == expected
