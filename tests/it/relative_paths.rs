//! Issue 22 item 1 as attack 7 found it: which summaries are shown relative to the session's
//! working directory, end to end through `rawpv print`. Path tools' paths inside the directory
//! become relative; `cwd/` alone becomes `./` (#6: an `rm -rf` argument vanished); a path with
//! `..` is kept (#9); shell commands are shown as written (#7: `cd /tmp && rm -rf …`, `ssh`,
//! string literals); a session whose directory changes shows every path as written (#8).

use assert_cmd::Command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

#[allow(clippy::unwrap_used)]
fn print(file: &str) -> String {
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .args(["print", "--color", "never", file])
        .current_dir(FIXTURES)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Each row's summary: the text between the status word and the id.
fn summaries(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let rest = l.split_once("no result ")?.1;
            Some(rest.rsplit_once("  [")?.0.to_owned())
        })
        .collect()
}

#[test]
fn only_path_summaries_become_relative() {
    assert_eq!(
        summaries(&print("cwd_relative.ndjson")),
        [
            "cd /tmp && rm -rf /home/a/proj/src",
            "rm -rf /home/a/proj/ --no-preserve-root",
            "ssh prod cat /home/a/proj/secrets.env",
            "echo \"/home/a/proj\" > /home/a/project2/x",
            "/home/a/project2/x",
            "/home/a/proj/../secret/id_rsa",
            ".",
            "./",
            "x  in src",
            "ls /home/a/proj/a␛]52;c;cHduZWQ=␇",
            "cp /home/a/proj/a /home/a/proj:/b",
        ]
    );
}

#[test]
fn a_changed_working_directory_shows_paths_as_written() {
    assert_eq!(
        summaries(&print("cwd_changed.ndjson")),
        ["/home/a/proj/x", "/home/a/proj/x", "/srv/other/y"]
    );
}
