//! Locks that outlive a panic: the one place the crate takes a `Mutex` or `RwLock` (issue 24
//! item 7: five copies of this helper). A request handler that panicked while holding a lock
//! poisons it; the data behind it is still whole (every writer leaves it consistent between
//! statements), so the next request takes the lock anyway instead of panicking in turn.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// `m.lock()`, poisoned or not.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `m.read()`, poisoned or not.
pub fn read<T: ?Sized>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|e| e.into_inner())
}

/// `m.write()`, poisoned or not.
pub fn write<T: ?Sized>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock poisoned by a panicking holder is taken again, its data as the holder left it.
    #[test]
    fn a_poisoned_lock_is_taken_again() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let r = std::sync::Arc::new(RwLock::new(1));
        let (m2, r2) = (m.clone(), r.clone());
        let _ = std::thread::spawn(move || {
            *lock(&m2) = 2;
            *write(&r2) = 2;
            let _both = (lock(&m2), write(&r2));
            panic!("poison both");
        })
        .join();
        assert!(m.is_poisoned() && r.is_poisoned());
        assert_eq!((*lock(&m), *read(&r)), (2, 2));
    }
}
