//! Accessibility through AX, the OS-free part: how an element's role,
//! subrole, attributes and actions become deskhand's row ([`map`]), read
//! over a recorded tree in the tests. The AX client that reads a live app
//! (`AXUIElement`) is in `mac/ax/`.

pub mod map;

#[cfg(test)]
mod recorded;
