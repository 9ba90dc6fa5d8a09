// Command informer runs one client-go SharedIndexInformer on the pods of every
// namespace and reports, one JSON object per stdout line, what rxkube's
// benchmarks compare against: the time and CPU to sync, the process's memory
// after a garbage collection, and how long the cache takes to reach a given
// resourceVersion of an object.
//
//	informer --kubeconfig PATH [--resource pods] [--protobuf] [--watch-list]
//	         [--strip-managed-fields] [--handlers N] [--expect N]
//
// Once synced it prints {"event":"synced",...}, then reads one command per
// stdin line:
//
//	memory                                runtime.GC(), then RSS and the Go heap (and the heap in use before the
//	                                      informer was made, heapInuseAtStartBytes)
//	wait <namespace>/<name> <rv>          until the store holds that object at that resourceVersion and every handler
//	                                      was last called with it or is called with it later (meant for the object
//	                                      of the last event: a handler that moved on to another object before the
//	                                      command does not count)
//	exit                                  exits 0
//
// Errors are printed as {"event":"error","message":...} and exit 1.
// bench/lib/goInformer.ts builds it from Go modules; bench/README.md says how
// the benchmarks use it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// pollEvery is how often a wait or the sync checks its condition: the same
// period the Node clients are polled at.
const pollEvery = time.Millisecond

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout)
)

// emit prints one protocol line.
func emit(v map[string]any) {
	outMu.Lock()
	defer outMu.Unlock()
	_ = out.Encode(v)
}

// fail reports an error on the protocol and exits 1.
func fail(err error) {
	emit(map[string]any{"event": "error", "message": err.Error()})
	os.Exit(1)
}

// cpuMs is the user + system CPU this process has spent, in ms.
func cpuMs() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// rssBytes reads the resident set size from /proc/self/statm (its second field, in pages).
func rssBytes() (int64, error) {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(raw))
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/self/statm: unexpected %q", raw)
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * int64(os.Getpagesize()), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// target is the object version a `wait` command waits for.
type target struct{ namespace, name, resourceVersion string }

func (t *target) is(pod *corev1.Pod) bool {
	return pod.ResourceVersion == t.resourceVersion && pod.Name == t.name && pod.Namespace == t.namespace
}

// handler is one ResourceEventHandler: it counts adds and remembers the last
// pod it was called with, so a wait can tell whether it has seen an event.
type handler struct {
	adds    atomic.Int64
	last    atomic.Pointer[corev1.Pod]
	reached atomic.Bool
}

var want atomic.Pointer[target]

func (h *handler) saw(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	// Stored before the target is read, and the waiter stores the target before reading this: one of the two
	// always sees the other, so an event handled while a wait begins is not missed.
	h.last.Store(pod)
	if t := want.Load(); t != nil && t.is(pod) {
		h.reached.Store(true)
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path of the kubeconfig (required)")
	resource := flag.String("resource", "pods", "the resource to inform on (only pods)")
	protobuf := flag.Bool("protobuf", false, "ask for application/vnd.kubernetes.protobuf instead of JSON")
	watchList := flag.Bool("watch-list", false, "stream the initial list as a watch (client-go's WatchListClient feature gate); else a paged LIST")
	strip := flag.Bool("strip-managed-fields", false, "drop metadata.managedFields in a transform before objects are stored")
	handlers := flag.Int("handlers", 1, "ResourceEventHandlers to register")
	expect := flag.Int("expect", 0, "objects the initial list holds: synced waits until handler 0 has had that many adds (the store that many objects with 0 handlers)")
	flag.Parse()
	// The heap of the program with client-go loaded and nothing cached, so a reader can tell the cache from the rest.
	runtime.GC()
	var atStart runtime.MemStats
	runtime.ReadMemStats(&atStart)
	start := time.Now()

	switch {
	case *kubeconfig == "":
		fail(errors.New("--kubeconfig is required"))
	case *resource != "pods":
		fail(fmt.Errorf("--resource: only pods is supported, got %q", *resource))
	case *handlers < 0:
		fail(fmt.Errorf("--handlers: expected a non-negative integer, got %d", *handlers))
	case *expect < 0:
		fail(fmt.Errorf("--expect: expected a non-negative integer, got %d", *expect))
	}

	// client-go reads its feature gates from KUBE_FEATURE_<name> on the first Enabled call, which comes later (when
	// the reflector is made). WatchListClient is on by default since v0.35, so the paged LIST needs it set off.
	if err := os.Setenv("KUBE_FEATURE_WatchListClient", strconv.FormatBool(*watchList)); err != nil {
		fail(err)
	}
	if got := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient); got != *watchList {
		fail(fmt.Errorf("the WatchListClient feature gate is %v, wanted %v", got, *watchList))
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(fmt.Errorf("kubeconfig %s: %w", *kubeconfig, err))
	}
	if *protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	// No client-side rate limit: the default (5/s, bursts of 10) would throttle the pages of a paged LIST, which the
	// Node clients do not.
	cfg.QPS = -1
	client, err := corev1client.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}

	// What informers.NewSharedInformerFactory(...).Core().V1().Pods().Informer() builds, without compiling every
	// API group's client into the program.
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (k8sruntime.Object, error) {
			return client.Pods(metav1.NamespaceAll).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Pods(metav1.NamespaceAll).Watch(ctx, opts)
		},
	}, client)
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if *strip {
		if err := inf.SetTransform(func(obj any) (any, error) {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetManagedFields(nil)
			}
			return obj, nil
		}); err != nil {
			fail(err)
		}
	}

	hs := make([]*handler, *handlers)
	regs := make([]cache.ResourceEventHandlerRegistration, *handlers)
	for i := range hs {
		h := &handler{}
		hs[i] = h
		regs[i], err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				h.adds.Add(1)
				h.saw(obj)
			},
			UpdateFunc: func(_, obj any) { h.saw(obj) },
		})
		if err != nil {
			fail(err)
		}
	}

	stop := make(chan struct{})
	go inf.Run(stop)

	store := inf.GetStore()
	synced := func() bool {
		if !inf.HasSynced() {
			return false
		}
		if len(hs) == 0 {
			return len(store.ListKeys()) >= *expect
		}
		return regs[0].HasSynced() && hs[0].adds.Load() >= int64(*expect)
	}
	for !synced() {
		time.Sleep(pollEvery)
	}
	emit(map[string]any{"event": "synced", "syncMs": ms(time.Since(start)), "cpuMs": cpuMs(), "objects": len(store.ListKeys())})

	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "memory":
			objects := len(store.ListKeys())
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			rss, err := rssBytes()
			if err != nil {
				fail(err)
			}
			emit(map[string]any{"event": "memory", "rssBytes": rss, "heapInuseBytes": m.HeapInuse, "heapAllocBytes": m.HeapAlloc, "sysBytes": m.Sys, "objects": objects, "heapInuseAtStartBytes": atStart.HeapInuse})
		case "wait":
			if len(fields) != 3 {
				fail(fmt.Errorf("wait: expected `wait <namespace>/<name> <resourceVersion>`, got %q", lines.Text()))
			}
			waitFor(fields[1], fields[2], store, hs)
		case "exit":
			close(stop)
			os.Exit(0)
		default:
			fail(fmt.Errorf("unknown command %q (memory, wait, exit)", fields[0]))
		}
	}
	if err := lines.Err(); err != nil {
		fail(err)
	}
	close(stop)
}

// waitFor polls until the store holds key at resourceVersion and every handler has been called with it, then prints
// the time and CPU from the command's receipt.
func waitFor(key, resourceVersion string, store cache.Store, hs []*handler) {
	t0 := time.Now()
	cpu0 := cpuMs()
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		fail(err)
	}
	t := &target{namespace: namespace, name: name, resourceVersion: resourceVersion}
	for _, h := range hs {
		h.reached.Store(false)
	}
	want.Store(t)
	for _, h := range hs {
		if last := h.last.Load(); last != nil && t.is(last) {
			h.reached.Store(true)
		}
	}
	reached := func() bool {
		obj, ok, err := store.GetByKey(key)
		if err != nil {
			fail(err)
		}
		if !ok || obj.(*corev1.Pod).ResourceVersion != resourceVersion {
			return false
		}
		for _, h := range hs {
			if !h.reached.Load() {
				return false
			}
		}
		return true
	}
	for !reached() {
		time.Sleep(pollEvery)
	}
	want.Store(nil)
	emit(map[string]any{"event": "reached", "ms": ms(time.Since(t0)), "cpuMs": cpuMs() - cpu0})
}
