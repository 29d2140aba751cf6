//! Time on a CPU of this machine's processes, from `/proc/*/task/*/schedstat`
//! (nanoseconds, every thread), for benches that split a short run's CPU
//! between the server, PostgreSQL and Redis. `/proc/<pid>/stat` counts in
//! ticks of 10 ms, too coarse for a round of a few hundred milliseconds.

use std::time::Duration;

/// Whose time to count.
#[derive(Debug, Clone, Copy)]
pub enum Who<'a> {
    /// This process.
    Me,
    /// Every process whose name (`comm`) is this.
    Named(&'a str),
}

/// Time on a CPU so far of the threads of `who` still alive (an exited
/// process's time is gone from `/proc`); zero where `/proc` cannot be read.
pub fn on_cpu(who: Who<'_>) -> Duration {
    let pids: Vec<String> = match who {
        Who::Me => vec!["self".to_owned()],
        Who::Named(name) => std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|comm| comm.trim_end() == name)
            })
            .collect(),
    };
    let mut nanos = 0u64;
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
                continue;
            };
            // "<on cpu ns> <waiting ns> <timeslices>"
            nanos += stat
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Duration::from_nanos(nanos)
}

/// The CPU time of this process, PostgreSQL and Redis, read together.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    parts: [Duration; 3],
}

impl Split {
    /// Reads the three now.
    pub fn now() -> Split {
        Split {
            parts: [
                on_cpu(Who::Me),
                on_cpu(Who::Named("postgres")),
                on_cpu(Who::Named("redis-server")),
            ],
        }
    }

    /// What each spent since `before`, as "this process X ms, postgres Y
    /// ms, redis Z ms".
    pub fn since(&self, before: &Split) -> String {
        let ms = |i: usize| self.parts[i].saturating_sub(before.parts[i]).as_secs_f64() * 1000.0;
        format!(
            "this process {:.0} ms, postgres {:.0} ms, redis {:.0} ms",
            ms(0),
            ms(1),
            ms(2)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_spends_time_on_a_cpu_and_the_count_grows() {
        let before = on_cpu(Who::Me);
        let mut x = 0u64;
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let after = on_cpu(Who::Me);
        assert!(after > before, "{before:?} -> {after:?}");
        assert_eq!(on_cpu(Who::Named("no-such-process-name")), Duration::ZERO);
    }
}
