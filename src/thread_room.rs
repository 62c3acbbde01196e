//! Room for threads, checked before they start: under `ulimit -v`, a thread the standard library
//! starts can get its stack and then abort the process as it begins (docs/CONTRACT.md §8.4), so
//! a run first makes sure that its threads can start, and fails as an error where they cannot.

use std::ffi::c_void;
use std::io;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::RwLock;

/// The stack of every thread the strategies start (`batched`'s workers, `pipeline`'s runtime
/// builder and tokio workers), set rather than left to the defaults so that [`threads_can_start`]
/// knows what they will ask for.
pub(crate) const STACK: usize = 2 << 20;

/// The heap [`threads_can_start`] asks to be free a thread: a new thread's first allocations
/// map memory of their own when the address space has no room for a malloc arena, and a thread
/// the standard library starts maps its signal stack (a few pages) as it begins.
const HEAP_ROOM: usize = 1 << 20;

/// Whether `count` threads of [`STACK`] can start and run at once now, with room to spare: a
/// [`HEAP_ROOM`] each is reserved, and as many threads with twice that stack are started, all
/// held until the last has started, then let go; their stacks stay in the C library's cache,
/// where the threads started next find them. Where there is not room enough, the run fails here,
/// as an error, rather than in an allocation of those threads, which aborts. The threads started
/// next may still not start, as an error.
///
/// The threads are the C library's own ([`start_held`]): one the standard library starts maps a
/// signal stack and registers thread-local destructors once it runs, and where the address space
/// has room for its stack but not for those, the process aborts. The threads started after these
/// find the room they need in what these leave: a cached stack, and the heap room, given back,
/// for the signal stack and the rest.
pub(crate) fn threads_can_start(count: usize) -> io::Result<()> {
    let out_of_memory = |_| io::Error::from(io::ErrorKind::OutOfMemory);
    let _room = Room::hold(count.saturating_mul(HEAP_ROOM))?;
    let mut started = Vec::new();
    started.try_reserve_exact(count).map_err(out_of_memory)?;
    let hold = RwLock::new(());
    let held = hold.write();
    let starting = (0..count).try_for_each(|_| {
        // SAFETY: every thread started is joined below, before `hold` goes.
        unsafe { start_held(&hold, 2 * STACK) }.map(|thread| started.push(thread))
    });
    drop(held);
    for thread in started {
        // SAFETY: `thread` was started joinable, and is joined once.
        unsafe { libc::pthread_join(thread, ptr::null_mut()) };
    }
    starting
}
/// Address space held until dropped, mapped apart from the allocator: the C library's `free` of
/// a mapped block raises the size from which it maps blocks of their own, so after a [`HEAP_ROOM`]
/// a thread freed through it, `batched`'s chunk buffers came from the heap, where growing one
/// copies it (10-13 % more instructions a line, counted by cachegrind).
struct Room {
    start: *mut c_void,
    len: usize,
}

impl Room {
    fn hold(len: usize) -> io::Result<Room> {
        if len == 0 {
            return Ok(Room {
                start: ptr::null_mut(),
                len,
            });
        }
        let (protection, flags) = (
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON,
        );
        // SAFETY: a new private anonymous mapping, placed by the kernel, touches no memory of ours.
        let start = unsafe { libc::mmap(ptr::null_mut(), len, protection, flags, -1, 0) };
        if start == libc::MAP_FAILED {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        Ok(Room { start, len })
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `start` and `len` are the mapping `hold` made, unmapped once, here.
            unsafe { libc::munmap(self.start, self.len) };
        }
    }
}

/// Starts a thread of the C library, with a stack of `stack` bytes, that takes `hold` to read
/// and ends. Nothing in it allocates or maps memory: it can only fail to start, as an error.
///
/// # Safety
///
/// The thread, joinable, must be joined before `hold` goes.
unsafe fn start_held(hold: &RwLock<()>, stack: usize) -> io::Result<libc::pthread_t> {
    extern "C" fn wait_for_release(hold: *mut c_void) -> *mut c_void {
        // SAFETY: `start_held` passes its lock, which outlives this thread.
        let hold = unsafe { &*hold.cast::<RwLock<()>>() };
        drop(hold.read());
        ptr::null_mut()
    }
    let mut attributes = MaybeUninit::<libc::pthread_attr_t>::uninit();
    let attributes = attributes.as_mut_ptr();
    let mut thread = MaybeUninit::<libc::pthread_t>::uninit();
    // SAFETY: the attributes are initialized before they are set or used, and destroyed after
    // `pthread_create`, which copies what it needs of them. `wait_for_release` is given `hold` as
    // the lock it is, and the caller keeps it until the thread is joined.
    let code = unsafe {
        let mut code = libc::pthread_attr_init(attributes);
        if code == 0 {
            code = libc::pthread_attr_setstacksize(attributes, stack);
            if code == 0 {
                let hold = ptr::from_ref(hold).cast_mut().cast();
                code =
                    libc::pthread_create(thread.as_mut_ptr(), attributes, wait_for_release, hold);
            }
            libc::pthread_attr_destroy(attributes);
        }
        code
    };
    match code {
        // SAFETY: `pthread_create` wrote the thread's id, as it succeeded.
        0 => Ok(unsafe { thread.assume_init() }),
        code => Err(io::Error::from_raw_os_error(code)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_that_fit_can_start() {
        for count in [0, 1, 3] {
            threads_can_start(count).unwrap();
        }
    }

    /// Heap room that no address space holds is an error before any thread starts.
    #[test]
    fn room_that_no_address_space_holds_is_an_error() {
        let failure = threads_can_start(1 << 40).unwrap_err();
        assert_eq!(failure.kind(), io::ErrorKind::OutOfMemory);
    }

    /// A stack that cannot be had is the error `pthread_create` gives, not an abort; one that can
    /// runs, and waits for the lock to be let go.
    #[test]
    fn a_thread_that_cannot_start_is_an_error() {
        let hold = RwLock::new(());
        // SAFETY: the call fails, so there is no thread to join.
        let failure = unsafe { start_held(&hold, 1 << 60) }.unwrap_err();
        assert!(failure.raw_os_error().is_some(), "{failure}");
        let held = hold.write();
        // SAFETY: the thread is joined below, before `hold` goes.
        let thread = unsafe { start_held(&hold, STACK) }.unwrap();
        drop(held);
        // SAFETY: `thread` was started joinable, and is joined once.
        assert_eq!(unsafe { libc::pthread_join(thread, ptr::null_mut()) }, 0);
    }
}
