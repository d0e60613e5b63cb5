package main

// The Kafka engine: the flags that put a command's jobs in Kafka
// (--kafka), and the connection to the brokers. runner/kafka and kafka-go
// are used here and in kafkabackend.go only; the commands reach Kafka
// through the backend interface (backend.go).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// Defaults and names of the Kafka flags.
const (
	defaultKafkaPrefix = "baton"
	defaultKafkaPort   = "9092"
	// kafkaPasswordEnv holds the SASL password (never on the command
	// line, where other users of the machine could read it).
	kafkaPasswordEnv = "BATON_KAFKA_PASSWORD"
)

// kafkaOnly are the flags that mean something only with --kafka (the TLS
// ones as named by a command's kafkaFlags: see tlsName).
var kafkaOnly = []string{"prefix", "tls", "tls-ca", "tls-cert", "tls-key", "sasl", "sasl-user"}

// kafkaFlags are the flags that put a command's jobs in Kafka, on topics
// named under a prefix, instead of in a store file or ZooKeeper.
type kafkaFlags struct {
	fs       *flag.FlagSet
	getenv   func(string) string
	brokers  *string
	prefix   *string
	tls      *bool
	tlsCA    *string
	tlsCert  *string
	tlsKey   *string
	sasl     *string
	saslUser *string
	connect  *time.Duration // --connect-timeout, shared with the ZooKeeper flags
	z        *zkFlags       // for --retain, baton worker's, shared with them too
	// tlsPrefix is put before the names of the TLS flags: "" for every
	// command but 'baton serve', whose own listener has --tls-cert and
	// --tls-key; there they are --kafka-tls, --kafka-tls-ca, ...
	tlsPrefix string

	cfg kafkarunner.Config // made by check
}

// addKafkaFlags adds --kafka, --prefix and the TLS and SASL flags to fs,
// which has the ZooKeeper flags already (--connect-timeout is theirs and
// serves both). With optional, --kafka is an alternative to --store too.
func (c *cli) addKafkaFlags(fs *flag.FlagSet, z *zkFlags, optional bool) *kafkaFlags {
	return c.addKafkaFlagsNamed(fs, z, optional, "")
}

// addServeKafkaFlags adds the Kafka flags of 'baton serve': the TLS ones
// named --kafka-tls, --kafka-tls-ca, --kafka-tls-cert and --kafka-tls-key,
// since --tls-cert and --tls-key are its listener's.
func (c *cli) addServeKafkaFlags(fs *flag.FlagSet, z *zkFlags) *kafkaFlags {
	return c.addKafkaFlagsNamed(fs, z, true, "kafka-")
}

// tlsName is the name of TLS flag name ("tls-ca") for this command.
func (k *kafkaFlags) tlsName(name string) string { return k.tlsPrefix + name }

func (c *cli) addKafkaFlagsNamed(fs *flag.FlagSet, z *zkFlags, optional bool, tlsPrefix string) *kafkaFlags {
	use := "the Kafka brokers `HOST:PORT[,HOST:PORT...]` whose topics hold the jobs and their actions (see 'baton worker'); instead of --zk"
	if optional {
		use = strings.TrimSuffix(use, "--zk") + "--store or --zk"
	}
	return &kafkaFlags{
		fs:       fs,
		getenv:   c.getenv,
		brokers:  fs.String("kafka", "", use),
		prefix:   fs.String("prefix", defaultKafkaPrefix, "with --kafka, the `NAME` that baton's topics and consumer groups are named under (NAME.restarter, NAME.state, NAME.action.ACTION, ...)"),
		tls:      fs.Bool(tlsPrefix+"tls", false, "with --kafka, connect with TLS, trusting the system's certificate authorities"),
		tlsCA:    fs.String(tlsPrefix+"tls-ca", "", "with --kafka, connect with TLS, trusting the certificate authorities in the PEM `FILE` (not the system's)"),
		tlsCert:  fs.String(tlsPrefix+"tls-cert", "", "with --kafka, connect with TLS and present the client certificate in the PEM `FILE` (with --"+tlsPrefix+"tls-key)"),
		tlsKey:   fs.String(tlsPrefix+"tls-key", "", "with --kafka, the PEM `FILE` of the private key of --"+tlsPrefix+"tls-cert"),
		sasl:     fs.String("sasl", "", "with --kafka, authenticate with SASL `MECHANISM` (plain, scram-sha-256 or scram-sha-512) as --sasl-user, with the password in $"+kafkaPasswordEnv),
		saslUser: fs.String("sasl-user", "", "with --kafka and --sasl, the SASL user `NAME`"),
		connect:  z.connect,
		z:        z,

		tlsPrefix: tlsPrefix,
	}
}

// on reports whether --kafka was given (the command works on Kafka).
func (k *kafkaFlags) on() bool { return k != nil && given(k.fs, "kafka") }

// checkEngines checks the flags that say where the jobs are: a store file
// (--store), ZooKeeper (--zk) or Kafka (--kafka), for a usage error. Only
// one of them, each with its own flags only; required says --zk or
// --kafka must be given (the commands that have no store file). With
// --kafka it makes the configuration (reading the TLS files).
func checkEngines(z *zkFlags, k *kafkaFlags, required bool) error {
	if !k.on() {
		for _, name := range kafkaOnly {
			if strings.HasPrefix(name, "tls") {
				name = k.tlsName(name)
			}
			if given(k.fs, name) {
				return fmt.Errorf("--%s needs --kafka", name)
			}
		}
		if required && !z.on() {
			return errors.New("--zk or --kafka is required: the ZooKeeper servers or the Kafka brokers, HOST:PORT[,HOST:PORT...]")
		}
		return z.check(required)
	}
	switch {
	case z.on():
		return errors.New("--kafka and --zk exclude each other: the jobs are either in Kafka or in ZooKeeper")
	case given(k.fs, "store"):
		return errors.New("--kafka and --store exclude each other: the jobs are either in Kafka or in a store file")
	}
	for _, name := range []string{"root", "auth", "auth-file", "zk-session-timeout"} {
		if given(k.fs, name) {
			return fmt.Errorf("--%s needs --zk; it does not go with --kafka", name)
		}
	}
	return k.check()
}

// check checks --kafka and its flags, and makes the configuration.
func (k *kafkaFlags) check() error {
	if strings.TrimSpace(*k.brokers) == "" {
		return errors.New("--kafka is empty: give the Kafka brokers, HOST:PORT[,HOST:PORT...]")
	}
	brokers, err := hostPorts("kafka", "broker", *k.brokers, defaultKafkaPort)
	if err != nil {
		return err
	}
	if err := checkPrefix(*k.prefix); err != nil {
		return err
	}
	if *k.connect <= 0 {
		return fmt.Errorf("--connect-timeout must be positive, got %v", *k.connect)
	}
	cfg := kafkarunner.Config{Brokers: brokers, Prefix: *k.prefix}
	if cfg.TLS, err = k.tlsConfig(); err != nil {
		return err
	}
	if cfg.SASL, err = k.saslMechanism(); err != nil {
		return err
	}
	k.cfg = cfg
	return nil
}

// checkPrefix checks --prefix with runner/kafka's rule, to say so before
// anything connects.
func checkPrefix(p string) error {
	var pe *kafkarunner.PrefixError
	if err := kafkarunner.CheckPrefix(p); errors.As(err, &pe) && pe.At >= 0 {
		return fmt.Errorf("--prefix %q has %q at byte %d: a topic name allows letters, digits, '.', '_' and '-'", p, p[pe.At], pe.At)
	} else if err != nil {
		return fmt.Errorf("--prefix %q: want 1 to %d bytes (every topic name must fit in 249)", p, kafkarunner.MaxPrefix)
	}
	return nil
}

// tlsConfig returns the TLS configuration the TLS flags ask for, or nil.
func (k *kafkaFlags) tlsConfig() (*tls.Config, error) {
	if !*k.tls && *k.tlsCA == "" && *k.tlsCert == "" && *k.tlsKey == "" {
		return nil, nil
	}
	caFlag, certFlag, keyFlag := k.tlsName("tls-ca"), k.tlsName("tls-cert"), k.tlsName("tls-key")
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if *k.tlsCA != "" {
		pem, err := os.ReadFile(*k.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %v", caFlag, *k.tlsCA, pathErr(err))
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--%s %s: no PEM certificate in it", caFlag, *k.tlsCA)
		}
	}
	switch {
	case *k.tlsCert == "" && *k.tlsKey == "":
	case *k.tlsCert == "":
		return nil, fmt.Errorf("--%s needs --%s: the client certificate it is the key of", keyFlag, certFlag)
	case *k.tlsKey == "":
		return nil, fmt.Errorf("--%s needs --%s: the certificate's private key", certFlag, keyFlag)
	default:
		certPEM, err := os.ReadFile(*k.tlsCert)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %v", certFlag, *k.tlsCert, pathErr(err))
		}
		keyPEM, err := os.ReadFile(*k.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %v", keyFlag, *k.tlsKey, pathErr(err))
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("--%s %s, --%s %s: %v", certFlag, *k.tlsCert, keyFlag, *k.tlsKey, strings.TrimPrefix(err.Error(), "tls: "))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// saslMechanism returns the SASL mechanism the SASL flags ask for, or nil.
func (k *kafkaFlags) saslMechanism() (sasl.Mechanism, error) {
	if *k.sasl == "" {
		if given(k.fs, "sasl-user") {
			return nil, errors.New("--sasl-user needs --sasl: the mechanism, plain, scram-sha-256 or scram-sha-512")
		}
		if given(k.fs, "sasl") {
			return nil, errors.New("--sasl is empty: want plain, scram-sha-256 or scram-sha-512")
		}
		return nil, nil
	}
	if *k.saslUser == "" {
		return nil, fmt.Errorf("--sasl %s needs --sasl-user: the user to authenticate as", *k.sasl)
	}
	password := k.getenv(kafkaPasswordEnv)
	if password == "" {
		return nil, fmt.Errorf("--sasl %s: the password is not set: put it in $%s", *k.sasl, kafkaPasswordEnv)
	}
	switch strings.ToLower(*k.sasl) {
	case "plain":
		return plain.Mechanism{Username: *k.saslUser, Password: password}, nil
	case "scram-sha-256":
		return scram.Mechanism(scram.SHA256, *k.saslUser, password)
	case "scram-sha-512":
		return scram.Mechanism(scram.SHA512, *k.saslUser, password)
	}
	return nil, fmt.Errorf("--sasl %q: unknown mechanism (want plain, scram-sha-256 or scram-sha-512)", *k.sasl)
}

// where names the prefix on the brokers, for messages: "Kafka
// 127.0.0.1:9092 under prefix baton".
func (k *kafkaFlags) where() string {
	return fmt.Sprintf("Kafka %s under prefix %s", strings.Join(k.cfg.Brokers, ","), *k.prefix)
}

// hint is the flags that name the same topics again, for the commands a
// message suggests. The password is never on the command line.
func (k *kafkaFlags) hint() string {
	h := "--kafka " + *k.brokers
	if *k.prefix != defaultKafkaPrefix {
		h += " --prefix " + *k.prefix
	}
	if *k.tls {
		h += " --tls"
	}
	for _, f := range []struct{ name, value string }{{"tls-ca", *k.tlsCA}, {"tls-cert", *k.tlsCert}, {"tls-key", *k.tlsKey}, {"sasl", *k.sasl}, {"sasl-user", *k.saslUser}} {
		if f.value != "" {
			h += " --" + f.name + " " + f.value
		}
	}
	return h
}

// kafkaJobs is a command's connection to the topics under a prefix.
type kafkaJobs struct {
	f  *kafkaFlags
	st *kafkarunner.Store // nil when the prefix has no topics and the command only reads
	tr *kafka.Transport
	cl *kafka.Client // for what the store does not say: the restarter group's members
}

// open connects to the brokers, waiting at most --connect-timeout for
// them to answer, and opens the store on the prefix's topics. With create,
// the topics that do not exist are created (worker, submit); without, the
// store creates none (a typo in --prefix must not leave topics behind, and
// a user who may not create topics may still read), and a prefix without
// a state topic gives kafkaJobs without a store: there are no jobs.
func (k *kafkaFlags) open(ctx context.Context, log *slog.Logger, create bool) (*kafkaJobs, error) {
	cctx, cancel := context.WithTimeout(ctx, *k.connect)
	defer cancel()
	if err := k.reach(cctx); err != nil {
		return nil, err
	}
	kj := &kafkaJobs{f: k, tr: &kafka.Transport{DialTimeout: *k.connect, ClientID: "baton", TLS: k.cfg.TLS, SASL: k.cfg.SASL}}
	kj.cl = &kafka.Client{Addr: kafka.TCP(k.cfg.Brokers...), Timeout: *k.connect, Transport: kj.tr}
	cfg := k.cfg
	cfg.Logger = log
	if k.z.retain != nil {
		cfg.Retention = *k.z.retain
		if cfg.Retention == 0 {
			cfg.Retention = -1 // --retain 0: kept
		}
	}
	cfg.NoCreate = !create
	// Open waits within cctx for a broker slow to answer metadata.
	st, err := kafkarunner.Open(cctx, cfg)
	var missing *kafkarunner.MissingTopicsError
	switch {
	case err == nil:
		kj.st = st
		return kj, nil
	case errors.As(err, &missing) && slices.Contains(missing.Topics, kafkarunner.StateTopic(*k.prefix)):
		return kj, nil
	}
	kj.tr.CloseIdleConnections()
	what := "opening the topics"
	if k.connectionFailed(cctx, err) {
		what = "a metadata request" // the first request Open makes
	}
	return nil, k.failed(cctx, what, err)
}

// reach dials the brokers until one takes a connection, and says why none
// did: whether anything listens is the first thing to know, and kafka-go
// reports a refused connection as a broker that is "not available".
func (k *kafkaFlags) reach(ctx context.Context) error {
	var first error
	for _, b := range k.cfg.Brokers {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", b)
		if err == nil {
			conn.Close()
			return nil
		}
		if first == nil {
			first = err
		}
	}
	brokers := strings.Join(k.cfg.Brokers, ",")
	if ctx.Err() != nil {
		return &storeError{fmt.Sprintf("cannot reach Kafka at %s: no connection within %v (is it running? --connect-timeout sets the wait)", brokers, *k.connect), ctx.Err()}
	}
	var dns *net.DNSError
	if errors.As(first, &dns) {
		return &storeError{fmt.Sprintf("cannot reach Kafka at %s: %v", brokers, dns), first}
	}
	var oe *net.OpError
	if errors.As(first, &oe) {
		first = oe.Err // "connect: connection refused", without the address said already
	}
	return &storeError{fmt.Sprintf("cannot reach Kafka at %s: %v (is it running?)", brokers, first), first}
}

// goMethod is the Go method name kafka-go puts before its errors.
var goMethod = regexp.MustCompile(`kafka\.\(\*\w+\)\.\w+: `)

// connectionFailed reports whether err is a failure of the connection
// (an answer too slow, a connection closed), which failed says so of.
func (k *kafkaFlags) connectionFailed(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// failed is the error of a request to brokers that took a connection: an
// answer too slow, or a refusal (TLS, SASL, a broker that is not Kafka).
func (k *kafkaFlags) failed(ctx context.Context, what string, err error) error {
	msg := goMethod.ReplaceAllString(strings.TrimPrefix(err.Error(), "kafka: "), "")
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		last := ""
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			last = "; the last error: " + msg
		}
		return &storeError{fmt.Sprintf("%s: no answer to %s within %v (is it Kafka? does it want --tls or --sasl? --connect-timeout sets the wait)%s",
			k.where(), what, *k.connect, last), err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &storeError{fmt.Sprintf("%s: the broker closed the connection during %s (%s): %s", k.where(), what, k.securityHint(), msg), err}
	}
	return &storeError{fmt.Sprintf("%s: %s: %s", k.where(), what, msg), err}
}

// securityHint says what to check of TLS and SASL when a broker hangs up.
func (k *kafkaFlags) securityHint() string {
	h := "does it want --tls? "
	if k.cfg.TLS != nil {
		h = "does it take TLS? "
	}
	if k.cfg.SASL == nil {
		return h + "does it want --sasl?"
	}
	return h + "are --sasl, --sasl-user and $" + kafkaPasswordEnv + " right?"
}

// close closes the store and the connections.
func (kj *kafkaJobs) close() {
	if kj.st != nil {
		kj.st.Close()
	}
	kj.closeClient()
}

func (kj *kafkaJobs) closeClient() { kj.tr.CloseIdleConnections() }

// restarterGroup is the consumer group of the restarters (runner/kafka's
// package doc names it).
func (kj *kafkaJobs) restarterGroup() string { return kafkarunner.RestarterGroup(*kj.f.prefix) }

// restarters counts the members of the restarter group.
func (kj *kafkaJobs) restarters(ctx context.Context) (int, error) {
	res, err := kj.cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{kj.restarterGroup()}})
	if err != nil {
		return 0, fmt.Errorf("describe group %s: %w", kj.restarterGroup(), err)
	}
	n := 0
	for _, g := range res.Groups {
		if g.Error != nil {
			return 0, fmt.Errorf("describe group %s: %w", g.GroupID, g.Error)
		}
		n += len(g.Members)
	}
	return n, nil
}

// warnNoRestarter says, on w, when no restarter runs: submits and cancels
// then wait for one. It says nothing when it cannot tell.
func (kj *kafkaJobs) warnNoRestarter(ctx context.Context, w io.Writer, what string) {
	if n, err := kj.restarters(ctx); err == nil && n == 0 {
		fmt.Fprintf(w, "baton: no restarter runs in %s (group %s has no member): %s waits in topic %s until one starts ('baton worker %s' runs one)\n",
			kj.f.where(), kj.restarterGroup(), what, kafkarunner.RestarterTopic(*kj.f.prefix), kj.f.hint())
	}
}

// client returns a runner that neither restarts nor works: it submits,
// cancels and waits (it needs no Run). stop closes it; call it once done.
func (kj *kafkaJobs) client(log *slog.Logger) (_ *kafkarunner.Runner, stop func(), _ error) {
	r, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Logger: log}, Store: kj.st, Role: kafkarunner.RoleClient})
	if err != nil {
		return nil, nil, err
	}
	return r, func() { r.Close() }, nil
}

// skipped lists the nonzero counts of s: "malformed restarter messages: 2,
// at-most-once actions reported lost: 1".
func skipped(s kafkarunner.Stats) string {
	var parts []string
	for _, n := range []struct {
		n    int64
		what string
	}{
		{s.Malformed, "malformed restarter messages"}, {s.UnknownJobs, "results or cancels for unknown jobs"},
		{s.Stale, "results of deleted jobs"}, {s.MalformedActions, "malformed action messages"},
		{s.Lost, "at-most-once actions reported lost"}, {s.Oversized, "actions or results too large for a message"},
		{s.Fenced, "state records fenced by a newer claim"},
	} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", n.what, n.n))
		}
	}
	return strings.Join(parts, ", ")
}

// unconsumed lists the action names of root whose topic no member of the
// workers group consumes, sorted; an error when it cannot tell.
func (kj *kafkaJobs) unconsumed(ctx context.Context, root ast.Node) ([]string, error) {
	queues, err := kj.st.Queues(ctx)
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, q := range queues {
		if q.WorkersErr != nil {
			return nil, q.WorkersErr
		}
		served[q.Action] = q.Workers > 0
	}
	var missing []string
	ast.Walk(root, func(_ string, n *ast.Node) bool {
		if n.Kind == ast.KindAct && !served[n.Action] && !slices.Contains(missing, n.Action) {
			missing = append(missing, n.Action)
		}
		return true
	})
	slices.Sort(missing)
	return missing, nil
}

// writeKafka prints, after status's list of jobs, the restarters, the
// workers (writeKafkaWorkers) and the action topics with what waits in
// each, and warns loudly of the actions that wait on a topic no worker
// consumes, and of what placement cannot do (writePlacementWarnings):
//
//	restarters: 1 in group baton.restarters
//	WORKER  STATE      CAPACITY  RUNNING  QUARANTINED
//	w1      available  4         0        -
//	ACTION      QUEUED  WORKERS  TOPIC
//	email.send  3       0        baton.action.email.send
//	log         0       1        baton.action.log
//	WARNING: email.send: 3 queued, no worker consumes this topic (baton.action.email.send) ...
//
// When the workers group cannot be described, WORKERS shows "?" and no
// topic is said to have no worker: a line says it could not tell why.
func writeKafka(ctx context.Context, w io.Writer, b *kafkaBackend) error {
	kj := b.kj
	fmt.Fprintln(w)
	if kj.st == nil {
		fmt.Fprintf(w, "no topics in %s: nothing was submitted there (is --prefix right? 'baton worker %s' or 'baton submit %s' makes them)\n",
			b.where(), b.hint(), b.hint())
		return nil
	}
	n, err := kj.restarters(ctx)
	if err != nil {
		return fmt.Errorf("%s: %v", b.where(), err)
	}
	if n == 0 {
		fmt.Fprintf(w, "WARNING: no restarter runs (group %s has no member): new jobs, results and cancels wait in topic %s until one starts ('baton worker %s' runs one)\n",
			kj.restarterGroup(), kafkarunner.RestarterTopic(*kj.f.prefix), b.hint())
	} else {
		fmt.Fprintf(w, "restarters: %d in group %s\n", n, kj.restarterGroup())
	}
	if err := writeKafkaWorkers(ctx, w, kj.st, time.Now()); err != nil {
		fmt.Fprintf(w, "could not list the workers: %s\n", strings.TrimPrefix(err.Error(), "kafka: "))
	}
	queues, err := kj.st.Queues(ctx)
	if err != nil {
		return fmt.Errorf("%s: %v", b.where(), strings.TrimPrefix(err.Error(), "kafka: "))
	}
	if len(queues) == 0 {
		fmt.Fprintln(w, "no action topics yet (a worker makes those of its actions; a job, those it dispatches)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tQUEUED\tWORKERS\tTOPIC")
	var unknown error // why the workers are not known
	for _, q := range queues {
		workers := strconv.Itoa(q.Workers)
		if q.WorkersErr != nil {
			workers, unknown = "?", q.WorkersErr
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", q.Action, q.Waiting, workers, q.Topic)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unknown != nil {
		fmt.Fprintf(w, "could not tell how many workers consume these topics, so whether actions wait for want of a worker is unknown: %s\n",
			strings.TrimPrefix(unknown.Error(), "kafka: "))
		return nil
	}
	for _, q := range queues {
		if q.Workers == 0 && q.Waiting > 0 {
			fmt.Fprintf(w, "WARNING: %s: %d queued, no worker consumes this topic (%s): they wait until a worker with a handler for %q starts\n",
				q.Action, q.Waiting, q.Topic, q.Action)
		}
	}
	writePlacementWarnings(w, queues)
	return nil
}

// engineExit is the exit status for an error from opening ZooKeeper or
// Kafka: exitStore when it cannot be used (unreachable, refused), else
// exitError.
func engineExit(err error) int { return zkExit(err) }
