//! The environment as a few header lines of a table, each at most [`WIDTH`] columns;
//! the JSON holds every field in full.

use super::{Environment, LoadAverage, Timing};

/// The widest line a table prints by default.
pub const WIDTH: usize = 100;

fn or_unknown<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or("unknown".to_string(), T::to_string)
}

/// A line cut to [`WIDTH`] columns, with `…` where it was cut.
pub fn fit(line: String) -> String {
    if line.chars().count() <= WIDTH {
        return line;
    }
    let mut cut: String = line.chars().take(WIDTH - 1).collect();
    cut.push('…');
    cut
}

/// A line of at most [`WIDTH`] columns as it is; a longer one broken at spaces, after a
/// `,` or `;` where one falls in the second half of the line, each continuation
/// indented four more than the line (a word too long for any line is cut with `…`).
pub fn wrap(line: &str) -> Vec<String> {
    if line.chars().count() <= WIDTH {
        return vec![line.to_string()];
    }
    let lead = line.len() - line.trim_start().len();
    let cont = " ".repeat(lead + 4);
    let mut out = Vec::new();
    let mut cur = line[..lead].to_string();
    let mut empty = true; // `cur` holds only its indent
    let mut soft: Option<usize> = None; // where `cur` may break after a , or ;
    for word in line[lead..].split(' ') {
        let len = cur.chars().count();
        if !empty && len + 1 + word.chars().count() > WIDTH {
            match soft.filter(|&i| cur[..i].chars().count() > WIDTH / 2) {
                Some(i) => {
                    let rest = cur[i..].trim_start().to_string();
                    out.push(cur[..i].to_string());
                    empty = rest.is_empty();
                    cur = cont.clone() + &rest;
                }
                None => {
                    out.push(std::mem::replace(&mut cur, cont.clone()));
                    empty = true;
                }
            }
            soft = None;
            // What the soft break carried over may still leave no room for the word.
            if !empty && cur.chars().count() + 1 + word.chars().count() > WIDTH {
                out.push(std::mem::replace(&mut cur, cont.clone()));
                empty = true;
            }
        }
        if !empty {
            cur.push(' ');
        }
        cur.push_str(word);
        empty = false;
        if word.ends_with(',') || word.ends_with(';') {
            soft = Some(cur.len());
        }
    }
    out.push(cur);
    out.into_iter().map(fit).collect()
}

fn micros(us: f64) -> String {
    crate::bench::report::format::micros(us.round() as u64)
}

fn timing(t: &Timing) -> String {
    format!("median {} max {}", micros(t.median_us), micros(t.max_us))
}

fn load(l: &Option<LoadAverage>) -> String {
    l.map_or("unknown".to_string(), |l| format!("{:.2}", l.one))
}

/// The summary lines, ready to print (no trailing newlines).
pub fn header(env: &Environment) -> Vec<String> {
    let (b, m, s) = (&env.build, &env.machine, &env.storage);
    // `rustc 1.95.0 (59807616e 2026-04-14)`: the version says enough here.
    let rustc = b.rustc.as_deref().map_or("rustc unknown".to_string(), |r| {
        r.split(" (").next().unwrap_or(r).to_string()
    });
    let mut out = vec![format!(
        "environment: heddle {} ({}, opt-level {}), {rustc}",
        b.short(),
        or_unknown(&b.profile),
        or_unknown(&b.opt_level),
    )];
    out.push(format!(
        "  {} → {}; 1-min load {} → {} on {} available cores",
        env.started_utc,
        env.ended_utc.as_deref().unwrap_or("(running)"),
        load(&env.load_start),
        load(&env.load_end),
        m.available_cores
    ));
    out.push(format!(
        "  host {}: {}, {} CPUs / {} cores{}, microcode {}, {} RAM",
        or_unknown(&m.host),
        or_unknown(&m.cpu_model),
        or_unknown(&m.logical_cores),
        or_unknown(&m.physical_cores),
        if m.hypervisor == Some(true) {
            " (VM)"
        } else {
            ""
        },
        or_unknown(&m.microcode),
        m.memory_total_kib
            .map_or("unknown".to_string(), |k| format!(
                "{:.1} GiB",
                k as f64 / 1048576.0
            ))
    ));
    out.push(format!(
        "  kernel {}; governor {}, SMT {}, turbo {}; clocksource {}",
        or_unknown(&m.kernel),
        or_unknown(&m.governor),
        or_unknown(&m.smt),
        or_unknown(&m.turbo),
        or_unknown(&m.clocksource)
    ));
    out.push(format!(
        "  storage: {} on {} ({}, device {}{}) at {}",
        or_unknown(&s.fs_type),
        or_unknown(&s.mount_source),
        or_unknown(&s.mount_options),
        or_unknown(&s.block_device),
        match s.rotational {
            Some(true) => ", rotational",
            Some(false) => ", not rotational",
            None => "",
        },
        or_unknown(&s.mount_point)
    ));
    out.push(match (&env.fsync, &env.fsync_unknown) {
        (Some(f), _) => format!(
            "  fsync ({} each): file {}; directory {}",
            f.rounds,
            timing(&f.file),
            timing(&f.dir)
        ),
        (None, why) => format!(
            "  fsync: unknown ({})",
            why.as_deref().unwrap_or("not measured")
        ),
    });
    let d = &s.vm_dirty;
    out.push(format!(
        "  vm.dirty: ratio {}, background {}, bytes {}, background bytes {}, expire {} cs, writeback {} cs",
        or_unknown(&d.ratio),
        or_unknown(&d.background_ratio),
        or_unknown(&d.bytes),
        or_unknown(&d.background_bytes),
        or_unknown(&d.expire_centisecs),
        or_unknown(&d.writeback_centisecs)
    ));
    if !env.changed_during_run.is_empty() {
        out.push(format!(
            "  CHANGED during the run: {}",
            env.changed_during_run.join(", ")
        ));
    }
    out.into_iter().map(fit).collect()
}

#[cfg(test)]
mod tests {
    /// Issue 17: a long line breaks after a `,` or `;` in its second half, keeps every
    /// word, and indents its continuations.
    #[test]
    fn long_lines_wrap_within_the_width_keeping_every_word() {
        let line = format!(
            "    commit 1: {}; exclusive 12.7µs",
            (0..30)
                .map(|i| format!("phase{i} {i}.5ms"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let lines = wrap(&line);
        assert!(lines.len() > 2, "{lines:?}");
        for l in &lines {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        for l in &lines[..lines.len() - 1] {
            assert!(l.ends_with(',') || l.ends_with(';'), "{l}");
        }
        assert!(lines[1..].iter().all(|l| l.starts_with("        ")));
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(words(&lines.join(" ")), words(&line));
        assert_eq!(wrap("short"), ["short"]);
        // A soft break just past half the width carries a long rest over, and the next
        // word is long too: it still goes on a line of its own within the width.
        let carried = format!(
            "{}, {} {}",
            "a".repeat(50),
            "b ".repeat(24).trim_end(),
            "c".repeat(50)
        );
        let lines = wrap(&carried);
        for l in &lines {
            assert!(l.chars().count() <= WIDTH, "{lines:?}");
        }
        assert_eq!(words(&lines.join(" ")), words(&carried));
    }

    use super::*;

    #[test]
    fn long_lines_are_cut_to_the_width() {
        assert_eq!(fit("short".to_string()), "short");
        let cut = fit("x".repeat(150));
        assert_eq!(cut.chars().count(), WIDTH);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn unknown_fields_say_so() {
        let tmp = tempfile::tempdir().unwrap();
        let mut env = Environment::capture(&tmp.path().join("i"));
        env.machine.governor = None;
        env.fsync = None;
        env.fsync_unknown = Some("no writable directory".to_string());
        let text = header(&env).join("\n");
        assert!(text.contains("governor unknown"), "{text}");
        assert!(
            text.contains("fsync: unknown (no writable directory)"),
            "{text}"
        );
    }
}
