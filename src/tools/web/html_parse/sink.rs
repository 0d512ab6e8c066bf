//! The parser's tree sink: scraper's own, counting what it builds and frozen once the parse is
//! cut (too many nodes, too deep, too many attribute bytes, out of time, or asked to stop).

use std::borrow::Cow;
use std::cell::{Cell, Ref};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ego_tree::NodeId;
use html5ever::tendril::StrTendril;
use html5ever::tree_builder::{ElemName, ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, LocalName, Namespace, QualName};
use scraper::{Html, HtmlTreeSink};

use super::limits::{Cut, ParseLimits};

/// The clock and the stop flag are also read every this many nodes built.
const CHECK_EVERY: usize = 256;

/// A node handle: a node stored in the tree, or one the parser asked for after the parse was cut,
/// which is never stored (it keeps its name, and an identity, so the parser runs on unchanged).
#[derive(Clone, Debug)]
pub(super) enum Handle {
    Kept(NodeId),
    Dropped(Rc<DroppedNode>),
}

#[derive(Debug)]
pub(super) struct DroppedNode {
    id: u64,
    name: QualName,
}

/// An element's name, borrowed from the tree or from a dropped handle.
#[derive(Debug)]
pub(super) enum Name<'a> {
    Kept(Ref<'a, QualName>),
    Dropped(&'a QualName),
}

impl ElemName for Name<'_> {
    fn ns(&self) -> &Namespace {
        match self {
            Self::Kept(name) => &name.ns,
            Self::Dropped(name) => &name.ns,
        }
    }

    fn local_name(&self) -> &LocalName {
        match self {
            Self::Kept(name) => &name.local,
            Self::Dropped(name) => &name.local,
        }
    }
}

/// scraper's sink, counting what it builds and frozen once the parse is cut: after that nothing is
/// built or moved, so the tree is what was built up to the cut.
pub(super) struct BoundedSink<'s> {
    inner: HtmlTreeSink,
    limits: ParseLimits,
    deadline: Instant,
    stop: &'s AtomicBool,
    built: Cell<usize>,
    attribute_bytes: Cell<usize>,
    dropped: Cell<u64>,
    cut: Cell<Option<Cut>>,
}

impl<'s> BoundedSink<'s> {
    pub(super) fn new(limits: ParseLimits, stop: &'s AtomicBool) -> Self {
        let now = Instant::now();
        Self {
            inner: HtmlTreeSink::new(Html::new_document()),
            limits,
            deadline: now.checked_add(limits.budget).unwrap_or(now),
            stop,
            built: Cell::new(0),
            attribute_bytes: Cell::new(0),
            dropped: Cell::new(0),
            cut: Cell::new(None),
        }
    }

    fn frozen(&self) -> bool {
        self.cut.get().is_some()
    }

    fn freeze(&self, why: Cut) {
        if !self.frozen() {
            self.cut.set(Some(why));
        }
    }

    /// Reads the stop flag and the clock; whether the parse may go on.
    pub(super) fn keep_going(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            self.freeze(Cut::Stopped);
        } else if Instant::now() >= self.deadline {
            self.freeze(Cut::Time(self.limits.budget));
        }
        !self.frozen()
    }

    /// Counts one more node carrying `bytes` of attributes; whether it may be built.
    fn admit(&self, bytes: usize) -> bool {
        if self.frozen() {
            return false;
        }
        // Saturating: the counts come from the page, and an unbounded parse may run very long.
        let built = self.built.get().saturating_add(1);
        self.built.set(built);
        let bytes = self.attribute_bytes.get().saturating_add(bytes);
        self.attribute_bytes.set(bytes);
        if built > self.limits.max_nodes {
            self.freeze(Cut::Nodes(self.limits.max_nodes));
        } else if bytes > self.limits.max_attribute_bytes {
            self.freeze(Cut::AttributeBytes(self.limits.max_attribute_bytes));
        } else if built.is_multiple_of(CHECK_EVERY) {
            self.keep_going();
        }
        !self.frozen()
    }

    fn dropped(&self, name: QualName) -> Handle {
        let id = self.dropped.get().saturating_add(1);
        self.dropped.set(id);
        Handle::Dropped(Rc::new(DroppedNode { id, name }))
    }

    /// A dropped handle for a node that is not an element (its name is never asked for).
    fn dropped_other(&self) -> Handle {
        self.dropped(QualName::new(
            None,
            Namespace::from(""),
            LocalName::from(""),
        ))
    }

    /// How deep `id` is (the document is 0), counting no further than the depth cap.
    fn depth(&self, id: NodeId) -> usize {
        let html = self.inner.0.borrow();
        html.tree.get(id).map_or(0, |node| {
            node.ancestors()
                .take(self.limits.max_depth.saturating_add(1))
                .count()
        })
    }

    /// Whether a node may go at `depth`; freezes the parse if not.
    fn admit_depth(&self, depth: usize) -> bool {
        if depth > self.limits.max_depth {
            self.freeze(Cut::Depth(self.limits.max_depth));
        }
        !self.frozen()
    }

    fn has_parent(&self, id: NodeId) -> bool {
        let html = self.inner.0.borrow();
        html.tree.get(id).is_some_and(|n| n.parent().is_some())
    }

    /// Whether text appended to `id` joins its last child (no new node).
    fn last_child_is_text(&self, id: NodeId) -> bool {
        let html = self.inner.0.borrow();
        let last = html.tree.get(id).and_then(|n| n.last_child());
        last.is_some_and(|n| n.value().is_text())
    }

    /// Whether text inserted before `id` joins its previous sibling (no new node).
    fn previous_is_text(&self, id: NodeId) -> bool {
        let html = self.inner.0.borrow();
        let previous = html.tree.get(id).and_then(|n| n.prev_sibling());
        previous.is_some_and(|n| n.value().is_text())
    }
}

/// A child to insert, if it is stored (text always is).
fn kept_child(child: NodeOrText<Handle>) -> Option<NodeOrText<NodeId>> {
    match child {
        NodeOrText::AppendNode(Handle::Kept(id)) => Some(NodeOrText::AppendNode(id)),
        NodeOrText::AppendNode(Handle::Dropped(_)) => None,
        NodeOrText::AppendText(text) => Some(NodeOrText::AppendText(text)),
    }
}

impl<'s> TreeSink for BoundedSink<'s> {
    type Handle = Handle;
    type Output = (Html, Option<Cut>);
    type ElemName<'a>
        = Name<'a>
    where
        Self: 'a;

    fn finish(self) -> Self::Output {
        let cut = self.cut.get();
        (self.inner.finish(), cut)
    }

    // Parse errors are not kept: a hostile page can produce one per byte.
    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Handle {
        Handle::Kept(self.inner.get_document())
    }

    fn elem_name<'a>(&'a self, target: &'a Handle) -> Name<'a> {
        match target {
            Handle::Kept(id) => Name::Kept(self.inner.elem_name(id)),
            Handle::Dropped(node) => Name::Dropped(&node.name),
        }
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        let bytes = attrs
            .iter()
            .map(|a| a.name.local.len().saturating_add(a.value.len()))
            .fold(0usize, usize::saturating_add);
        if self.admit(bytes) {
            Handle::Kept(self.inner.create_element(name, attrs, flags))
        } else {
            self.dropped(name)
        }
    }

    fn create_comment(&self, text: StrTendril) -> Handle {
        if self.admit(0) {
            Handle::Kept(self.inner.create_comment(text))
        } else {
            self.dropped_other()
        }
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        if self.admit(0) {
            Handle::Kept(self.inner.create_pi(target, data))
        } else {
            self.dropped_other()
        }
    }

    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        let (Handle::Kept(parent), Some(child)) = (parent, kept_child(child)) else {
            return;
        };
        if self.frozen() {
            return;
        }
        let admitted = match child {
            NodeOrText::AppendNode(_) => self.admit_depth(self.depth(*parent).saturating_add(1)),
            NodeOrText::AppendText(_) => self.last_child_is_text(*parent) || self.admit(0),
        };
        if admitted {
            self.inner.append(parent, child);
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        // As scraper's sink does, but through this sink's own checks.
        match element {
            Handle::Kept(id) if self.has_parent(*id) => self.append_before_sibling(element, child),
            Handle::Kept(_) => self.append(prev_element, child),
            Handle::Dropped(_) => {}
        }
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        if self.admit(0) {
            self.inner
                .append_doctype_to_document(name, public_id, system_id);
        }
    }

    fn get_template_contents(&self, target: &Handle) -> Handle {
        match target {
            Handle::Kept(id) => Handle::Kept(self.inner.get_template_contents(id)),
            Handle::Dropped(_) => self.dropped_other(),
        }
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        match (x, y) {
            (Handle::Kept(a), Handle::Kept(b)) => a == b,
            (Handle::Dropped(a), Handle::Dropped(b)) => a.id == b.id,
            _ => false,
        }
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        let (Handle::Kept(sibling), Some(new_node)) = (sibling, kept_child(new_node)) else {
            return;
        };
        if self.frozen() {
            return;
        }
        let admitted = match new_node {
            NodeOrText::AppendNode(_) => self.admit_depth(self.depth(*sibling)),
            NodeOrText::AppendText(_) => self.previous_is_text(*sibling) || self.admit(0),
        };
        if admitted {
            self.inner.append_before_sibling(sibling, new_node);
        }
    }

    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        if let Handle::Kept(id) = target
            && !self.frozen()
        {
            self.inner.add_attrs_if_missing(id, attrs);
        }
    }

    fn remove_from_parent(&self, target: &Handle) {
        if let Handle::Kept(id) = target
            && !self.frozen()
        {
            self.inner.remove_from_parent(id);
        }
    }

    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        if let (Handle::Kept(node), Handle::Kept(new_parent)) = (node, new_parent)
            && !self.frozen()
        {
            self.inner.reparent_children(node, new_parent);
        }
    }
}
