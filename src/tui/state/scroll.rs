//! Where each pane is scrolled to, looked up by pane, and where the panes are on screen.

use ratatui::layout::Rect;

/// A scrollable pane's position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scroll {
    /// The first visible line (when not following).
    pub top: usize,
    /// Whether the view sticks to the bottom as output arrives.
    pub follow: bool,
    /// Lines in the pane at the last layout.
    pub total: usize,
    /// Visible lines at the last layout.
    pub height: usize,
}

impl Default for Scroll {
    fn default() -> Self {
        Self {
            top: 0,
            follow: true,
            total: 0,
            height: 1,
        }
    }
}

impl Scroll {
    /// The largest useful top line.
    pub fn max_top(&self) -> usize {
        self.total.saturating_sub(self.height)
    }

    /// The top line drawing uses.
    pub fn effective_top(&self) -> usize {
        if self.follow {
            self.max_top()
        } else {
            self.top.min(self.max_top())
        }
    }

    /// Moves by `delta` lines; reaching the bottom resumes following.
    pub fn by(&mut self, delta: isize) {
        let top = self.effective_top() as isize + delta;
        self.top = top.clamp(0, self.max_top() as isize) as usize;
        self.follow = self.top >= self.max_top();
    }

    /// Jumps to the top.
    pub fn jump_to_top(&mut self) {
        self.top = 0;
        self.follow = self.max_top() == 0;
    }

    /// Jumps to the bottom and follows new output.
    pub fn jump_to_bottom(&mut self) {
        self.follow = true;
        self.top = self.max_top();
    }

    /// Whether lines are hidden below the view.
    pub fn more_below(&self) -> bool {
        self.effective_top() < self.max_top()
    }

    /// Sets the size after a layout, keeping the position.
    pub fn resize(&mut self, total: usize, height: usize) {
        self.total = total;
        self.height = height.max(1);
        if !self.follow {
            self.top = self.top.min(self.max_top());
        }
    }
}

/// Where each pane is on screen (from the last layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    /// The whole screen.
    pub screen: Rect,
    /// The conversation.
    pub conversation: Rect,
    /// The timeline, if shown.
    pub timeline: Option<Rect>,
    /// The reasoning, if shown.
    pub reasoning: Option<Rect>,
    /// The tool output, if shown.
    pub tool_output: Option<Rect>,
    /// The input.
    pub input: Rect,
    /// The status line.
    pub status: Rect,
    /// Whether the terminal is too small to use.
    pub too_small: bool,
}

/// A pane that scrolls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The conversation.
    Conversation,
    /// The timeline of steps.
    Timeline,
    /// The reasoning.
    Reasoning,
    /// The tool output.
    ToolOutput,
}

impl Pane {
    /// The side panes, which follow the live step.
    pub const SIDE: [Pane; 3] = [Pane::Timeline, Pane::Reasoning, Pane::ToolOutput];
}

/// The scroll position of each pane, looked up by [`Pane`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scrolls([Scroll; 4]);

impl Scrolls {
    /// Every pane's position.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Scroll> {
        self.0.iter_mut()
    }
}

impl std::ops::Index<Pane> for Scrolls {
    type Output = Scroll;
    fn index(&self, pane: Pane) -> &Scroll {
        &self.0[pane as usize]
    }
}

impl std::ops::IndexMut<Pane> for Scrolls {
    fn index_mut(&mut self, pane: Pane) -> &mut Scroll {
        &mut self.0[pane as usize]
    }
}
