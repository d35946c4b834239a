"""TLS options (issue 14): mutual TLS on the internal connections, TLS on the REST endpoint.

Keys are Flink's where Flink has the setting. Flink reads REST certificates from Java
keystores (``security.ssl.rest.keystore``/``truststore``, JKS or PKCS12); flintlock reads PEM
files instead, under names of its own (``security.ssl.rest.cert``, ``.key``,
``.trusted-certs``), so that a Flink file's keystore paths are never mistaken for PEM files.
"""

from flintlock.common.config_option import ConfigOption, OptionType

INTERNAL_ENABLED = ConfigOption(
    "security.ssl.internal.enabled", OptionType.BOOLEAN, False,
    "Mutual TLS on the data connections between TaskManagers and the RPC connections between "
    "JobManager and TaskManagers, with a certificate authority and certificate made for each "
    "job at submission (docs/security.md). The job-secret handshake still runs inside TLS.",
)
REST_ENABLED = ConfigOption(
    "security.ssl.rest.enabled", OptionType.BOOLEAN, False,
    "Serve the REST endpoint over HTTPS with security.ssl.rest.cert and "
    "security.ssl.rest.key; the flintlock CLI then trusts exactly that certificate.",
)
REST_CERT = ConfigOption(
    "security.ssl.rest.cert", OptionType.STRING, None,
    "PEM file with the REST endpoint's certificate (and any intermediate certificates after "
    "it); required with security.ssl.rest.enabled. With authentication-enabled the CLI "
    "presents it as its client certificate, as Flink's client uses the REST keystore.",
)
REST_KEY = ConfigOption(
    "security.ssl.rest.key", OptionType.STRING, None,
    "PEM file with the unencrypted private key of security.ssl.rest.cert; keep it mode 0600.",
)
REST_TRUSTED_CERTS = ConfigOption(
    "security.ssl.rest.trusted-certs", OptionType.STRING, None,
    "PEM file of the certificates a REST client's certificate must be signed by (or be one "
    "of) with security.ssl.rest.authentication-enabled; default: security.ssl.rest.cert "
    "itself.",
)
REST_AUTHENTICATION = ConfigOption(
    "security.ssl.rest.authentication-enabled", OptionType.BOOLEAN, False,
    "Mutual TLS on the REST endpoint: a client must present a certificate trusted by "
    "security.ssl.rest.trusted-certs before any request is read (the bearer token is still "
    "required).",
)
