# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PKI: a CA, serving and client certificates, the service-account key, and kubeconfigs embedding them."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
from pathlib import Path

from cluster_harness.common import SERVICE_CIDR


def make_pki(directory: Path) -> None:
    """A CA, the API server's serving certificate, client certificates and the service-account key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def write_key(name: str, key) -> None:
        path = directory / f"{name}.key"
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        path.chmod(0o600)

    def name_of(common_name: str, organization: str | None = None) -> x509.Name:
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        if organization:
            attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        return x509.Name(attributes)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name_of("gpufabric-cluster-harness-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    write_key("ca", ca_key)
    (directory / "ca.crt").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))

    def issue(name: str, subject: x509.Name, server: bool) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
        )
        if server:
            service_ip = next(ipaddress.ip_network(SERVICE_CIDR).hosts())
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.DNSName("localhost"),
                        x509.DNSName("kubernetes"),
                        x509.DNSName("kubernetes.default"),
                        x509.DNSName("kubernetes.default.svc"),
                        x509.DNSName("kubernetes.default.svc.cluster.local"),
                        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                        x509.IPAddress(service_ip),
                    ]
                ),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        write_key(name, key)
        (directory / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    issue("apiserver", name_of("kube-apiserver"), server=True)
    issue("admin", name_of("gpufabric-harness-admin", "system:masters"), server=False)
    issue("controller-manager", name_of("system:kube-controller-manager"), server=False)
    issue("scheduler", name_of("system:kube-scheduler"), server=False)
    # kwok's kubelet endpoint (pod logs): served with a certificate of our CA for 127.0.0.1, which the API
    # server checks (--kubelet-certificate-authority) and presents its own client certificate to.
    issue("kwok", name_of("kwok-kubelet"), server=True)
    issue("apiserver-kubelet-client", name_of("kube-apiserver-kubelet-client", "system:masters"), server=False)

    sa_key = ec.generate_private_key(ec.SECP256R1())
    write_key("sa", sa_key)
    (directory / "sa.pub").write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def write_kubeconfig(path: Path, pki: Path, user: str, server: str) -> None:
    """A kubeconfig with the certificates embedded (JSON is YAML)."""

    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "gpufabric-harness", "cluster": {"server": server, "certificate-authority-data": b64("ca.crt")}}
        ],
        "users": [
            {
                "name": user,
                "user": {"client-certificate-data": b64(f"{user}.crt"), "client-key-data": b64(f"{user}.key")},
            }
        ],
        "contexts": [{"name": "gpufabric-harness", "context": {"cluster": "gpufabric-harness", "user": user}}],
        "current-context": "gpufabric-harness",
    }
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)
