//! Headless mode: one turn without the screen.
