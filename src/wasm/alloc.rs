//! The module's allocator: power-of-two size classes, one free list each.
//!
//! Why not Rust's default (dlmalloc): it was 7 KB of the module's code, the
//! largest single item after the core itself (docs/benchmarks.md). This one
//! is a few hundred bytes, and both `alloc` and `dealloc` are O(1), so no
//! allocation pattern a hostile message can cause makes them slow (a plain
//! free list walks its length on every call).
//!
//! Every block is a power of two from 16 bytes up, aligned to its own size
//! (at most a 64 KiB page), so a freed block serves any later request of its
//! class whatever the alignment asked for. Blocks are carved from the end of
//! linear memory, which grows a page at a time; freed blocks go onto their
//! class's list and are never merged. The cost is memory: up to twice the
//! size asked for, and a class keeps the most it ever held at once.
//!
//! WebAssembly here has one thread, so the state needs no lock.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;
use core::ptr::{self, null_mut};

const PAGE: usize = 65_536;
/// The smallest class, 2^4 = 16 bytes: room for the free list's link and
/// the largest alignment Rust asks for on wasm32 (u128's 16).
const MIN_CLASS: u32 = 4;
/// Classes 2^0 to 2^31; the lowest four are never used.
const CLASSES: usize = 32;

struct Heap {
    /// Head of each class's free list; a free block's first word links on.
    free: [*mut u8; CLASSES],
    /// Carving point: everything from here to `end` is unused.
    next: usize,
    /// End of linear memory as this allocator last saw it.
    end: usize,
}

pub struct SizeClasses(UnsafeCell<Heap>);

// SAFETY: wasm32-unknown-unknown without the atomics feature has one thread.
unsafe impl Sync for SizeClasses {}

impl SizeClasses {
    pub const fn new() -> Self {
        SizeClasses(UnsafeCell::new(Heap {
            free: [null_mut(); CLASSES],
            next: 0,
            end: 0,
        }))
    }
}

/// The class (log2 of the block size) for a request, if it can be met.
fn class_of(layout: Layout) -> Option<u32> {
    if layout.align() > PAGE {
        return None;
    }
    let size = layout.size().max(layout.align()).max(1 << MIN_CLASS);
    let class = size.checked_next_power_of_two()?.trailing_zeros();
    (class < CLASSES as u32).then_some(class)
}

impl Heap {
    fn push(&mut self, class: u32, block: *mut u8) {
        if let Some(head) = self.free.get_mut(class as usize) {
            // SAFETY: `block` is a free block of at least 16 bytes, aligned
            // to at least 16: its first word is ours to use.
            unsafe { block.cast::<*mut u8>().write(*head) };
            *head = block;
        }
    }

    fn pop(&mut self, class: u32) -> *mut u8 {
        match self.free.get_mut(class as usize) {
            Some(head) if !head.is_null() => {
                let block = *head;
                // SAFETY: `block` was pushed by `push`, which wrote the link.
                *head = unsafe { block.cast::<*mut u8>().read() };
                block
            }
            _ => null_mut(),
        }
    }

    /// A new block of 2^class bytes from the end of memory, aligned to its
    /// size (at most a page); the gap skipped to align it is cut into
    /// blocks for the smaller classes, so nothing is lost.
    fn carve(&mut self, class: u32) -> *mut u8 {
        if self.end == 0 {
            self.end = wasm32::memory_size(0).saturating_mul(PAGE);
            self.next = self.end;
        }
        let size = 1usize << class;
        let align = size.min(PAGE);
        // `next` is always a multiple of 16: its lowest set bit is the
        // largest block that starts there aligned to its own size.
        while self.next % align != 0 {
            let piece = self.next & self.next.wrapping_neg();
            if self.next.saturating_add(piece) > self.end {
                break;
            }
            self.push(piece.trailing_zeros(), self.next as *mut u8);
            self.next += piece;
        }
        let Some(start) = self.next.checked_next_multiple_of(align) else {
            return null_mut();
        };
        let Some(stop) = start.checked_add(size) else {
            return null_mut();
        };
        if stop > self.end {
            let pages = (stop - self.end).div_ceil(PAGE);
            let before = wasm32::memory_grow(0, pages);
            if before == usize::MAX {
                return null_mut();
            }
            let old_end = before.saturating_mul(PAGE);
            if old_end != self.end {
                // Someone else grew memory: start over at the new end.
                self.end = old_end.saturating_add(pages.saturating_mul(PAGE));
                self.next = old_end;
                return self.carve(class);
            }
            self.end = old_end.saturating_add(pages.saturating_mul(PAGE));
        }
        self.next = stop;
        start as *mut u8
    }
}

unsafe impl GlobalAlloc for SizeClasses {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            return null_mut();
        };
        // SAFETY: one thread, and no allocation happens while `heap` is held.
        let heap = unsafe { &mut *self.0.get() };
        let block = heap.pop(class);
        if block.is_null() {
            heap.carve(class)
        } else {
            block
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(class) = class_of(layout) {
            // SAFETY: as in `alloc`.
            unsafe { &mut *self.0.get() }.push(class, ptr);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return null_mut();
        };
        if class_of(layout) == class_of(new_layout) {
            // Same block size: the block already has room.
            return ptr;
        }
        // SAFETY: the caller's contract for `realloc` covers these calls.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}
