// Package web is the HTML side of 'baton serve': the pages' templates
// (html/template), their style sheet and script (embedded: no build step,
// no CDN), the views the templates draw, the job's tree as inline SVG
// (package draw) and its history as a timeline. Package server mounts the
// pages beside the API and gives them their data; this package reads no
// store and does no I/O but the writes to the io.Writer it is given.
//
// # The pages
//
//   - / lists jobs: counts per status (links to the filtered list), filters
//     status and ID prefix in the URL, pages of 100 (after=ID).
//   - /jobs/{id} shows a job: the header (status, version, progress, times,
//     failure or cancel reason, the cancel form for a write scope), the tree
//     drawn with every node's state, the details panel of ?node=PATH, the
//     signals the job keeps, the timeline and the steps. ?version=V shows
//     the job as it was at V. /jobs/{id}/signals lists its kept signals
//     alone (one payload whole with ?full=NAME/ID), for the script.
//   - /new validates, draws and submits a workflow; /workers lists the
//     workers; /login takes a token and sets the session cookie.
//
// Each page reads as a snapshot without its script; /static/baton.js adds
// live updates, time travel and filters on top of the DOM contract that
// docs/pages.md writes down (data-path, data-status and data-version
// attributes, element IDs, the palette's CSS custom properties).
//
// # Contracts
//
//   - Every string from a workflow, a payload, an output, an error or a job
//     ID is text, never markup: html/template escapes it, and the tree's
//     SVG comes from package draw, which escapes its text.
//   - No inline script, no style attribute, no inline style element: pages
//     work under the Content-Security-Policy CSP. Data for the script is in
//     data-* attributes.
//   - Views are plain values built by pure functions (JobViewOf, ListViewOf,
//     TimelineOf): the same inputs give the same page, byte for byte.
//   - A Site is safe for concurrent use.
package web
