use super::super::memory::OOM_FILE;
use super::*;

#[test]
fn logs_put_stderr_after_stdout_and_keep_the_tail() {
    assert_eq!(combine(b"out", b""), "out");
    assert_eq!(combine(b"out", b"err\n"), "out\n--- stderr ---\nerr\n");
    assert_eq!(combine_tail(b"abcdef", b"", 3), "def");
    assert_eq!(combine_tail("ééé".as_bytes(), b"", 3), "é");
    assert_eq!(last_line(b"a\nlast line\n\n").as_deref(), Some("last line"));
}

#[test]
fn an_unstarted_try_after_an_oom_kill_keeps_the_limit_to_raise() {
    let instance = std::env::temp_dir().join(format!("couler-oom-{}", std::process::id()));
    let _ = fs::remove_dir_all(&instance);
    let first = instance.join("1");
    fs::create_dir_all(&first).unwrap();
    fs::create_dir_all(instance.join("2")).unwrap();
    let meta = TryMeta {
        attempt: 1,
        iteration: 1,
        retry: 0,
        memory_limit: Some(64 << 20),
    };
    let state = StateFile {
        cgroup: None,
        pid: 1,
        pgid: 1,
        started_unix_ms: 0,
        meta,
    };
    fs::write(first.join(STATE_FILE), serde_json::to_vec(&state).unwrap()).unwrap();
    let unstarted = |found| match found {
        Some(OnDisk::Unstarted { meta, after_oom }) => (meta, after_oom),
        _ => panic!("expected an unstarted try"),
    };
    let (next, plain) = unstarted(latest_try(&instance));
    let oom = Oom {
        used: 100 << 20,
        limit: 64 << 20,
    };
    fs::write(first.join(OOM_FILE), serde_json::to_vec(&oom).unwrap()).unwrap();
    let (next_after_oom, after_oom) = unstarted(latest_try(&instance));
    let _ = fs::remove_dir_all(&instance);
    assert_eq!((next.attempt, next.retry), (1, 1));
    assert_eq!(next.memory_limit, Some(64 << 20));
    assert!(!plain);
    assert_eq!(next_after_oom, next);
    assert!(after_oom);
    // State files from before memory limits record none.
    let old = r#"{"pid":1,"pgid":1,"started_unix_ms":0,"attempt":1,"iteration":1,"retry":0}"#;
    let old: StateFile = serde_json::from_str(old).unwrap();
    assert_eq!(old.meta.memory_limit, None);
}

#[test]
fn exit_files_hold_a_number_or_bubblewraps_status() {
    use super::reattach::read_exit_file;
    let dir = std::env::temp_dir().join(format!("couler-exit-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let running = "{ \"child-pid\": 12, \"mnt-namespace\": 4026532174 }\n";
    for (text, code) in [
        ("0\n", Some(0)),
        ("125\n", Some(125)),
        ("", None),
        (running, None),
        (&format!("{running}{{ \"exit-code\": 137 }}\n"), Some(137)),
    ] {
        fs::write(dir.join(EXIT_FILE), text).unwrap();
        assert_eq!(read_exit_file(&dir), code, "{text:?}");
    }
    let _ = fs::remove_dir_all(&dir);
}
