// Package draw lays a job's tree out as boxes and lines and writes it as
// SVG: the drawing of `baton inspect --format svg`, of the API's
// graph route and of the job page.
//
//	g, err := draw.Layout(j, draw.Options{})
//	err = g.SVG(w)     // a standalone SVG document: `baton inspect`, the API
//	err = g.PageSVG(w) // the same drawing for inline use in an HTML page
//
// # What is drawn
//
// Every node of the tree is a box, idle ones included, because the tree is
// known before it runs. A box shows the node's kind, its action or name,
// its payload clipped to 40 characters, and its state twice: as the
// colour of a band across its foot and as an icon and a word in that band
// (idle ○, running ▶, succeeded ✓, failed ✗, cancelled ⊘, skipped ↷),
// so colour is never the only signal. The palette is the job page's:
// succeeded #009E73, failed #D55E00, running #0072B2, cancelled #8C8C8C,
// skipped #DDDDDD (a neutral light grey), idle white with a grey outline.
//
// The tree is drawn indented, each inner node's box above its children:
//
//   - a seq's children stand left to right, linked in order;
//   - a par's children are stacked, each linked from the par;
//   - a try's parts are stacked in labelled lanes: body, rescue, finally;
//   - a dag's children stand in columns by the longest chain of siblings
//     they are after (those after nothing first), linked by their edges;
//   - a race's, a map's and a loop's children are stacked, as a par's;
//   - a choice's cases are stacked in lanes labelled with their values
//     (`when "gold"`, `when any ["b","c"]`, `else`); the cases it did not
//     select are skipped, and its box says what it read and chose
//     ("on tier → else").
//
// Workflow version 3's leaves and options show on a box's second line: a
// wait's signal ("signal approval"), a sleep's duration, an end's reason,
// a race's need, a par's limit, a map's array (once it started, its
// copies instead, counted per state by icon: "3 copies: 1▶ 2✓"), a
// loop's iteration ("iteration 3", its body the child loop[2]), until and
// max; a dag child's guard comes first (`when plan = "audit" · ...`).
//
// # Groups and the bound on boxes
//
// A seq, par, race or map (its copies) with more than Options.GroupOver
// children is drawn closed: one group box that counts the nodes under it
// per state. Options.Expand opens it. At most Options.MaxBoxes boxes
// are drawn: nodes are opened from the root down, level by level in tree
// order, and a node whose children would pass the bound stays closed as a
// group too; the Graph says so (Graph.Truncated). Either way every node is drawn exactly once,
// as a box or inside the counts of one group box.
//
// # Contracts
//
//   - Pure and deterministic: Layout reads only the job and the options,
//     and the same job and options give the same Graph and the same SVG,
//     byte for byte.
//   - No two boxes overlap, and every edge joins two drawn boxes.
//   - The SVG is self-contained: no script, no external reference, no
//     font to fetch. Every string from the job (its ID, action names,
//     names, payloads, errors) is escaped text, never markup.
//   - Each node's <g> element carries data-path (the node's path, "" for
//     the root, as the CLI and the API write it) and data-status (the
//     state's word); a group's also carries data-group (its children). The
//     root <svg> has a viewBox, so a page can pan and zoom it.
//   - Colours, outlines and fonts are in the document's one <style>
//     element (StyleSheet), a state's by the node's data-status: the
//     elements carry their geometry and text only, so a big drawing does
//     not repeat them per node, and a page that changes a node's
//     data-status recolours it. A page that shows the SVG inline without
//     its <style> styles the same classes itself.
//
// # The page's variant
//
// PageSVG writes the same drawing for a web page (the job page inlines
// it): no <style> element, and each box as HTML: its <g class="node">,
// with the same attributes but no transform, holds a <foreignObject
// class="label"> placed over the box (its x and y) with a <div
// class="label"> of <p> lines (kind and name, second line, group counts,
// state), the same text as SVG's <text> elements, line by line. The
// page's style sheet draws the div's outline and fills its last line,
// p.state, as the band, by the node's data-status. A box has no <title>
// and no <rect>; the edges of a kind are one <path class="links
// links-KIND"> and all arrowheads one <path class="arrows"> (no marker,
// no data-from or data-to): fewer elements to parse. A browser lays out every SVG <text> of a drawing,
// seen or not, which made a job of 1,000 nodes slow to open; HTML it can
// skip where it is not seen (content-visibility). The markup is
// well-formed XML (the div declares the XHTML namespace), so it also
// parses as an SVG fragment; a renderer without HTML (not a browser)
// should be given SVG's output instead.
package draw
