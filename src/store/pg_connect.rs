//! Opening PostgreSQL connections, with OpenSSL told not to tear itself down
//! at exit.
//!
//! libpq encrypts through the system's OpenSSL, which by default registers
//! `OPENSSL_cleanup` with `atexit`. When the process exits while another
//! thread still holds an encrypted connection (a pool's connections, a
//! worker between queries, a test server left running), that handler frees
//! what the other thread is using and the process dies of SIGSEGV after its
//! work is done (openssl/openssl#6214). Initialising OpenSSL first with
//! `OPENSSL_INIT_NO_ATEXIT`, as `openssl_sys::init` does, leaves the
//! clean-up to the operating system. It must run before libpq's own first
//! initialisation, so every PostgreSQL connection is opened here.

use diesel::{Connection, ConnectionResult, PgConnection};

/// Opens a PostgreSQL connection to `url`, having first made sure OpenSSL
/// registers no clean-up at exit.
#[allow(clippy::disallowed_methods)] // the one place it is allowed
pub fn connect_pg(url: &str) -> ConnectionResult<PgConnection> {
    openssl_sys::init();
    PgConnection::establish(url)
}
