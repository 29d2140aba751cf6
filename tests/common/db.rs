//! PostgreSQL databases made for one test each.

use diesel::RunQueryDsl;

/// A PostgreSQL database made for one test, dropped with it.
pub struct TestDatabase {
    admin_url: String,
    name: String,
    /// URL of the test database.
    pub url: String,
}

impl TestDatabase {
    /// Creates a database on the server of `admin_url`.
    pub fn create(admin_url: &str) -> TestDatabase {
        let name = format!("uttt_test_{}", uttt::ids::record_id().to_lowercase());
        let mut conn = uttt::store::connect_pg(admin_url).unwrap_or_else(|e| {
            panic!("TEST_DATABASE_URL is set to {admin_url} but PostgreSQL cannot be reached: {e}")
        });
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
        let url = with_database(admin_url, &name);
        TestDatabase {
            admin_url: admin_url.to_owned(),
            name,
            url,
        }
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(mut conn) = uttt::store::connect_pg(&self.admin_url) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&mut conn);
        }
    }
}

/// Runs the reads of `f` in one transaction that sees one snapshot of the
/// database, so a match row and its move rows read by separate statements
/// agree even while a server (its clock, or the CPU in a left seat) goes on
/// writing. PostgreSQL's default isolation takes a new snapshot for each
/// statement; SQLite's transaction already reads one snapshot.
pub fn in_one_snapshot<T>(
    conn: &mut uttt::store::DbConnection,
    f: impl FnOnce(&mut uttt::store::DbConnection) -> Result<T, uttt::store::StoreError>,
) -> Result<T, uttt::store::StoreError> {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    conn.transaction(|conn| {
        if matches!(conn, uttt::store::DbConnection::Pg(_)) {
            conn.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .map_err(uttt::store::StoreError::from)?;
        }
        f(conn)
    })
}

/// `url` with its database name replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{name}", &base[..host_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

#[test]
fn database_names_are_replaced_in_urls() {
    assert_eq!(
        with_database("postgres://u@h:5432/postgres", "t1"),
        "postgres://u@h:5432/t1"
    );
    assert_eq!(
        with_database("postgres://u@h/db?sslmode=disable", "t1"),
        "postgres://u@h/t1?sslmode=disable"
    );
    assert_eq!(with_database("postgres://h", "t1"), "postgres://h/t1");
}
