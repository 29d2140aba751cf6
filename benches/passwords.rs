//! Cost of Argon2id at the server's parameters (m = 19 MiB, t = 2, p = 1):
//! what every registration (hash) and login (verify) spends on one core.

// A bench that cannot set itself up has nothing to measure: it stops there.
#![expect(clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};

fn passwords(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let passwords = uttt::service::passwords::Passwords::new().expect("hasher");
    let phc = runtime
        .block_on(passwords.hash("correct horse battery".into()))
        .expect("hash");
    let mut group = c.benchmark_group("argon2id");
    group.sample_size(20);
    group.bench_function("hash (register)", |b| {
        b.iter(|| runtime.block_on(passwords.hash("correct horse battery".into())))
    });
    group.bench_function("verify (login)", |b| {
        b.iter(|| {
            runtime.block_on(passwords.verify("correct horse battery".into(), Some(phc.clone())))
        })
    });
    group.finish();
}

criterion_group!(benches, passwords);
criterion_main!(benches);
