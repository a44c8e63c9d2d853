//! The client process named by `initialize.processId` (LSP 3.17: "If the parent process is
//! not alive then the server should exit"). A server whose pipe is held by some other process
//! (a shell, a wrapper) would otherwise outlive its editor (issue 8 defect 7).

use std::time::Duration;

/// How often the client process is checked.
pub const POLL: Duration = Duration::from_millis(500);

/// True while process `pid` exists (Unix: `kill(pid, 0)` succeeds or is refused with
/// `EPERM`). Elsewhere always true: the server then ends only with `exit` or end of input.
pub fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        if pid <= 0 {
            return true;
        }
        // SAFETY: signal 0 only checks that the process exists; no signal is sent.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Resolves once process `pid` is gone (polled every [`POLL`]).
pub async fn gone(pid: u32) {
    while alive(pid) {
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!alive(pid));
    }
}
