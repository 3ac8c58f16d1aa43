//! TLS to a PostgreSQL catalog on another machine: the rustls client configuration
//! that [`CatalogTls`] (libpq's `sslmode` and `sslrootcert` in `[catalog] url`) asks
//! for, with the client certificate of [`ClientCertificate`] (`sslcert`, `sslkey`) if
//! one is named, and what a refused handshake means for the operator.
//!
//! libpq's modes (PostgreSQL 15 documentation §34.19.1): `prefer` and `require` encrypt
//! without checking the server's certificate; `verify-ca` checks that a trusted
//! authority signed it; `verify-full` also that it names the host. rustls checks both
//! by default, so the first two and `verify-ca` loosen its verifier, in one place below
//! (`Loosened`); the handshake's own signatures are always checked.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::StoreError;
use crate::config::{CatalogRoots, CatalogTls, ClientCertificate};

/// The connector for `tls` (`None`: `sslmode=disable`, plain TCP), presenting `client`'s
/// certificate to a server that asks for one.
pub(super) fn connector(
    tls: &CatalogTls,
    client: Option<&ClientCertificate>,
) -> Result<Option<MakeRustlsConnect>, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_setup(e.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match tls {
        CatalogTls::Disable => return Ok(None),
        CatalogTls::Prefer | CatalogTls::Require => Arc::new(Loosened {
            chain: None,
            provider,
        }),
        CatalogTls::VerifyCa(file) => Arc::new(Loosened {
            chain: Some(webpki(&CatalogRoots::File(file.clone()), provider.clone())?),
            provider,
        }),
        CatalogTls::VerifyFull(roots) => webpki(roots, provider)?,
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some(c) => {
            let (chain, key) = client_identity(c)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| match e {
                    rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                        StoreError::CatalogTls {
                            reason: format!(
                                "sslkey {} is not the key of the certificate in sslcert {}",
                                c.key.display(),
                                c.cert.display()
                            ),
                            hint: "name the certificate and the private key it was made with",
                        }
                    }
                    other => StoreError::CatalogTls {
                        reason: format!(
                            "the key in sslkey {} cannot be used: {other}",
                            c.key.display()
                        ),
                        hint: "plikt's TLS takes RSA keys of 2048 to 8192 bits, ECDSA keys on P-256 or P-384, and Ed25519 keys; make a certificate with one of those",
                    },
                })?
        }
    };
    Ok(Some(MakeRustlsConnect::new(config)))
}

/// The certificate chain and private key of `c`, read from their files. The key is
/// refused, as libpq refuses it (`fe-secure-openssl.c`), when its file may be read by
/// others than its owner, or by others than its owner and group if root owns it: a
/// key others can read is no proof of who connects.
fn client_identity(
    c: &ClientCertificate,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), StoreError> {
    let cert_error = |reason: String| StoreError::CatalogTls {
        reason: format!("sslcert {}: {reason}", c.cert.display()),
        hint: "name a PEM file with the client certificate the PostgreSQL server's ssl_ca_file authority signed (its common name the user in [catalog] url)",
    };
    let chain = CertificateDer::pem_file_iter(&c.cert)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if chain.is_empty() {
        return Err(cert_error("holds no PEM certificate".into()));
    }
    let key_error = |reason: String, hint: &'static str| StoreError::CatalogTls {
        reason: format!("sslkey {}: {reason}", c.key.display()),
        hint,
    };
    const KEY_HINT: &str = "name the PEM file of the client certificate's private key (PKCS#8, PKCS#1 or SEC1, unencrypted)";
    let unreadable = |e: std::io::Error| key_error(e.to_string(), KEY_HINT);
    // As libpq: a regular file (a FIFO would block the connection), readable by its
    // owner only, or also by its group if root owns it; the file read is the one
    // looked at.
    let meta = std::fs::metadata(&c.key).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(key_error("is not a regular file".into(), KEY_HINT));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (mode, root) = (meta.mode() & 0o777, meta.uid() == 0);
        let open = if root { mode & 0o037 } else { mode & 0o077 };
        if open != 0 {
            return Err(key_error(
                format!("the private key's file may be read by others (mode {mode:04o})"),
                "keep it readable by plikt's user only: chmod 600 and owned by that user, or chmod 640 owned by root with plikt's group (as libpq asks)",
            ));
        }
    }
    let mut file = std::fs::File::open(&c.key).map_err(unreadable)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let opened = file.metadata().map_err(unreadable)?;
        if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
            return Err(key_error(
                "was replaced while plikt read it".into(),
                "connect again",
            ));
        }
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(unreadable)?;
    if String::from_utf8_lossy(&bytes).contains("ENCRYPTED") {
        return Err(key_error(
            "the private key is encrypted".into(),
            crate::config::DECRYPT_KEY,
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| key_error(format!("holds no PEM private key ({e})"), KEY_HINT))?;
    Ok((chain, key))
}

/// What to do when the server asks for a client certificate plikt was not given.
pub(super) const ASKS_FOR_CERTIFICATE: &str = "the PostgreSQL server asks for a client certificate: name it and its key with sslcert=/path/to/plikt.crt&sslkey=/path/to/plikt.key in [catalog] url";

fn tls_setup(reason: String) -> StoreError {
    StoreError::CatalogTls {
        reason,
        hint: "this is a fault of plikt's TLS set-up; report it",
    }
}

/// rustls's own verifier (chain, validity, host name) over `roots`.
fn webpki(
    roots: &CatalogRoots,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, StoreError> {
    let mut store = RootCertStore::empty();
    match roots {
        CatalogRoots::File(file) => {
            let unreadable = |reason: String| StoreError::CatalogTls {
                reason: format!("sslrootcert {}: {reason}", file.display()),
                hint: "name a PEM file with the certificate of the authority that signed the PostgreSQL server's certificate (the server's ssl_ca_file)",
            };
            let certs = CertificateDer::pem_file_iter(file)
                .map_err(|e| unreadable(e.to_string()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| unreadable(e.to_string()))?;
            if certs.is_empty() {
                return Err(unreadable("holds no PEM certificate".into()));
            }
            for cert in certs {
                store
                    .add(cert)
                    .map_err(|e| unreadable(format!("a certificate cannot be used: {e}")))?;
            }
        }
        CatalogRoots::System => {
            // Read once per process; none at all is an error below.
            store.add_parsable_certificates(crate::fetch::system_roots().iter().cloned());
        }
    }
    if store.is_empty() {
        return Err(StoreError::CatalogTls {
            reason: "the system has no trusted certificate authorities".into(),
            hint: "name the authority that signed the PostgreSQL server's certificate with sslrootcert=/path/to/ca.pem in [catalog] url",
        });
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
        .build()
        .map_err(|e| tls_setup(e.to_string()))
}

/// The looser checks of libpq's modes, in one place: `sslmode=prefer` and `require`
/// (`chain: None`) take any certificate (encrypted, but an attacker in the middle is
/// not kept out); `verify-ca` (`chain`: rustls's verifier) takes back only its
/// complaint that the certificate names another host (rustls checks the chain first, so
/// a name error means the chain was good). The handshake's signatures are always
/// checked, with the provider's algorithms as rustls's verifier checks them.
#[derive(Debug)]
struct Loosened {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Loosened {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The TLS error (a refused certificate, a failed handshake) among `error`'s causes.
pub(crate) fn tls_cause<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a rustls::Error> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        // I/O errors wrap it, sometimes twice (hyper's connector around rustls's).
        let mut wrapped = Some(e);
        while let Some(w) = wrapped {
            if let Some(r) = w.downcast_ref::<rustls::Error>() {
                return Some(r);
            }
            wrapped = w
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .map(|i| i as &(dyn std::error::Error + 'static));
        }
        cause = e.source();
    }
    None
}

/// What went wrong with TLS when connecting failed, and what the operator can do
/// (`None`: the failure was not TLS's).
pub(super) fn explain(
    error: &postgres::Error,
    tls: &CatalogTls,
    client: Option<&ClientCertificate>,
) -> Option<StoreError> {
    if let Some(r) = tls_cause(error) {
        return Some(StoreError::CatalogTls {
            reason: format!("the TLS handshake with PostgreSQL failed: {r}"),
            hint: hint(r, tls, client),
        });
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.to_string() == "server does not support TLS" {
            return Some(StoreError::CatalogTls {
                reason: "the PostgreSQL server does not offer TLS".into(),
                hint: "turn on ssl in the server's postgresql.conf (ssl = on, ssl_cert_file, ssl_key_file), or connect to a server that has it",
            });
        }
        cause = e.source();
    }
    None
}

fn hint(
    error: &rustls::Error,
    tls: &CatalogTls,
    client: Option<&ClientCertificate>,
) -> &'static str {
    use CertificateError as C;
    use rustls::AlertDescription as A;
    match error {
        // The server's verdict on the client's certificate (TLS alerts, RFC 8446 §6.2).
        rustls::Error::AlertReceived(
            A::UnknownCA
            | A::BadCertificate
            | A::UnsupportedCertificate
            | A::CertificateRevoked
            | A::CertificateExpired
            | A::CertificateUnknown
            | A::AccessDenied,
        ) if client.is_some() => {
            "the PostgreSQL server did not accept the client certificate of sslcert: it must be signed by an authority in the server's ssl_ca_file, within its validity period, and not revoked (the server's log says which)"
        }
        rustls::Error::AlertReceived(A::CertificateRequired) => ASKS_FOR_CERTIFICATE,
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => {
            "the server's certificate does not name the host in [catalog] url: connect by a name the certificate has (its subject alternative names), or use sslmode=verify-ca to check only who signed it"
        }
        rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => match tls {
            CatalogTls::VerifyCa(_) | CatalogTls::VerifyFull(CatalogRoots::File(_)) => {
                "the server's certificate is not signed by an authority in sslrootcert: name the PEM file of the authority that signed it (the server's ssl_ca_file)"
            }
            _ => {
                "the server's certificate is not signed by an authority this system trusts: name the authority that signed it with sslrootcert=/path/to/ca.pem in [catalog] url"
            }
        },
        rustls::Error::InvalidCertificate(
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. },
        ) => {
            "the server's certificate is outside its validity period: renew it on the server (or check this machine's clock)"
        }
        _ => {
            "check the server's ssl settings and the sslmode in [catalog] url (disable, prefer, require, verify-ca, verify-full)"
        }
    }
}
