// Package render draws a job's tree: Graphviz dot, mermaid and SVG, nodes
// coloured by status. 'baton inspect' and the HTTP API's graph route
// draw with it, so both show the same drawing. It is pure: a job in, text
// out, the same text for the same job.
package render
