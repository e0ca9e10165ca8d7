// Issue 28, item 6: Kubernetes Pods and batch/v1 Jobs read as Berth jobs.
// What maps, what is warned about (with its path) and what is refused (the
// path first).
#include "cli/kube_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::cli {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// The design note's example, indented as Kubernetes needs it.
constexpr std::string_view kDesignNotePod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: gpu-task
spec:
  containers:
  - name: training-container
    image: your-training-image:latest
    resources:
      limits:
        nvidia.com/gpu: 1 # 请求一个 GPU
    command: ["python", "train.py"] # 你的训练脚本
  nodeSelector:
    gpu-node: "true"
)";

json Body(std::string_view yaml, const SubmitOptions& command_line = {}) {
  Result<KubeJob> job = ParseKubeManifest(yaml);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  if (!job.ok()) return json();
  Result<json> body = KubeSubmissionBody(*job, command_line);
  EXPECT_TRUE(body.ok()) << body.status().ToString();
  return body.ok() ? *body : json();
}

std::vector<std::string> Warnings(std::string_view yaml) {
  Result<KubeJob> job = ParseKubeManifest(yaml);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? job->warnings : std::vector<std::string>{};
}

std::string Error(std::string_view yaml) {
  Result<KubeJob> job = ParseKubeManifest(yaml);
  EXPECT_FALSE(job.ok()) << yaml;
  return job.ok() ? "" : job.status().message();
}

// A Pod with one container whose body is `container` (indented 4) and
// whose spec adds `spec` (indented 2).
std::string Pod(std::string_view container, std::string_view spec = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"
         "    image: img\n" +
         std::string(container) + std::string(spec);
}

TEST(KubeManifestTest, TheDesignNotePodIsOneGpuOnAGpuNode) {
  const json body = Body(kDesignNotePod);
  EXPECT_EQ(body["name"], "gpu-task");
  EXPECT_EQ(body["gpus"], 1);
  EXPECT_EQ(body["constraint"], "gpu-node=true");
  EXPECT_EQ(body["command"], json::array({"train.py"}));
  EXPECT_EQ(body["container"], json::parse(R"({"image": "your-training-image:latest",
      "entrypoint": ["python"], "mount_home": false})"));
  EXPECT_FALSE(body.contains("tasks"));
  EXPECT_FALSE(body.contains("script"));
  EXPECT_THAT(Warnings(kDesignNotePod), IsEmpty());
}

TEST(KubeManifestTest, AJobWithParallelismTwoIsAGangOfTwo) {
  const json body = Body(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: ddp}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 3
  activeDeadlineSeconds: 600
  suspend: true
  template:
    spec:
      restartPolicy: OnFailure
      activeDeadlineSeconds: 300
      terminationGracePeriodSeconds: 45
      containers:
      - name: trainer
        image: localhost/train:1
        imagePullPolicy: Never
        command: [torchrun, --nproc-per-node=1]
        args: [train.py, --epochs, "10"]
        workingDir: /workspace
        env:
        - {name: NCCL_DEBUG, value: INFO}
        - {name: EMPTY}
        resources:
          requests: {cpu: 500m, memory: 1.5Gi}
          limits: {nvidia.com/gpu: "2"}
        volumeMounts:
        - {name: data, mountPath: /data, readOnly: true}
        - {name: out, mountPath: /out, subPath: run1}
      nodeSelector: {gpu-node: "true", zone: a}
      volumes:
      - {name: data, hostPath: {path: /srv/data}}
      - {name: out, hostPath: {path: /srv/out/}}
)");
  EXPECT_EQ(body["name"], "ddp");
  EXPECT_EQ(body["tasks"], 2);
  EXPECT_EQ(body["gpus"], 2);
  EXPECT_EQ(body["cpus"], 0.5);
  EXPECT_EQ(body["memory_mib"], 1536);
  EXPECT_EQ(body["retries"], 3);
  EXPECT_EQ(body["time_limit_s"], 300);  // the smaller of the Job's and the Pod's
  EXPECT_EQ(body["grace_s"], 45);
  EXPECT_EQ(body["hold"], true);
  EXPECT_EQ(body["constraint"], "gpu-node=true&zone=a");
  EXPECT_EQ(body["command"],
            json::parse(R"(["--nproc-per-node=1", "train.py", "--epochs", "10"])"));
  EXPECT_EQ(body["container"], json::parse(R"({
      "image": "localhost/train:1", "pull": "never", "entrypoint": ["torchrun"],
      "workdir": "/workspace", "env": {"NCCL_DEBUG": "INFO", "EMPTY": ""},
      "mounts": [{"source": "/srv/data", "target": "/data", "read_only": true},
                 {"source": "/srv/out/run1", "target": "/out", "read_only": false}],
      "mount_home": false})"));
}

TEST(KubeManifestTest, TheCommandLineWinsOverTheManifest) {
  SubmitOptions command_line;
  command_line.gpus = 4;
  command_line.queue = "vision";
  const json body = Body(kDesignNotePod, command_line);
  EXPECT_EQ(body["gpus"], 4);
  EXPECT_EQ(body["queue"], "vision");
  EXPECT_EQ(body["name"], "gpu-task");
}

TEST(KubeManifestTest, CommandArgsAndTheImageDefaults) {
  // No command and no args: the image's own; no GPU asked: none.
  json body = Body(Pod(""));
  EXPECT_FALSE(body.contains("command"));
  EXPECT_FALSE(body.contains("script"));
  EXPECT_FALSE(body["container"].contains("entrypoint"));
  EXPECT_EQ(body["gpus"], 0);
  EXPECT_EQ(body["name"], "p");
  // Only args: the image's entrypoint runs them.
  body = Body(Pod("    args: [--lr, '0.1']\n"));
  EXPECT_EQ(body["command"], json::parse(R"(["--lr", "0.1"])"));
  EXPECT_FALSE(body["container"].contains("entrypoint"));
  // A one-word command: the entrypoint alone.
  body = Body(Pod("    command: [/run.sh]\n"));
  EXPECT_EQ(body["container"]["entrypoint"], json::array({"/run.sh"}));
  EXPECT_FALSE(body.contains("command"));
}

TEST(KubeManifestTest, WithoutMetadataNameTheContainersNameNamesTheJob) {
  const json body = Body(
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n"
      "  - {name: trainer, image: img}\n");
  EXPECT_EQ(body["name"], "trainer");
}

TEST(KubeManifestTest, PullPoliciesMapToBerths) {
  for (const auto& [policy, pull] : std::vector<std::pair<std::string, std::string>>{
           {"IfNotPresent", "missing"}, {"Never", "never"}, {"Always", "always"}}) {
    EXPECT_EQ(Body(Pod("    imagePullPolicy: " + policy + "\n"))["container"]["pull"], pull);
  }
  EXPECT_FALSE(Body(Pod(""))["container"].contains("pull"));
}

TEST(KubeManifestTest, QuantitiesInBerthUnits) {
  const std::vector<std::pair<std::string, int64_t>> memory = {
      {"1.5Gi", 1536}, {"128974848", 123}, {"129e6", 124}, {"123Mi", 123}, {"1G", 954}};
  for (const auto& [text, mib] : memory) {
    const json body = Body(Pod("    resources: {limits: {memory: \"" + text + "\"}}\n"));
    EXPECT_EQ(body["memory_mib"], mib) << text;
  }
  EXPECT_EQ(Body(Pod("    resources: {limits: {cpu: 250m}}\n"))["cpus"], 0.25);
  EXPECT_EQ(Body(Pod("    resources: {limits: {cpu: 2}}\n"))["cpus"], 2);
  // Requests count where no limit is given; GPUs as requests alone too.
  const json body =
      Body(Pod("    resources:\n      requests: {cpu: 1500m, memory: 2Gi, nvidia.com/gpu: 1}\n"
               "      limits: {memory: 4Gi}\n"));
  EXPECT_EQ(body["cpus"], 1.5);
  EXPECT_EQ(body["memory_mib"], 4096);
  EXPECT_EQ(body["gpus"], 1);
}

TEST(KubeManifestTest, NodeSelectorHostnameIsTheNodeList) {
  const json body = Body(Pod("", "  nodeSelector: {kubernetes.io/hostname: node-2, ib: \"\"}\n"));
  EXPECT_EQ(body["nodelist"], "node-2");
  EXPECT_EQ(body["constraint"], "ib=");
}

TEST(KubeManifestTest, EveryFieldWithoutMeaningIsWarnedWithItsPath) {
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: research
  labels: {team: vision}
spec:
  restartPolicy: Always
  hostNetwork: false
  tolerations: [{key: gpu, operator: Exists}]
  initContainers:
  - {name: init, image: busybox}
  containers:
  - name: c
    image: img
    command: [sh, -c, 'echo $(HOME)']
    livenessProbe: {exec: {command: ["true"]}}
    ports: [{containerPort: 80}]
    resources:
      limits: {cpu: "2", ephemeral-storage: 1Gi}
      requests: {cpu: "1"}
    volumeMounts:
    - {name: data, mountPath: /data, mountPropagation: None}
    colour: blue
  volumes:
  - {name: data, hostPath: {path: /srv, type: Directory}}
  - {name: unused, hostPath: {path: /tmp}}
status: {phase: Running}
)";
  EXPECT_THAT(
      Warnings(pod),
      ElementsAre(
          "metadata.namespace: ignored, Berth has no namespaces",
          "metadata.labels: ignored, Berth jobs carry no labels",
          "spec.volumes[0].hostPath.type: ignored, Berth does not check what the host path is",
          "spec.containers[0].command[2]: passed as written; Berth does not expand $(VAR)",
          "spec.containers[0].volumeMounts[0].mountPropagation: ignored, it has no meaning in "
          "Berth",
          "spec.containers[0].resources.requests.cpu: ignored, Berth reserves and enforces one "
          "amount, the limit 2",
          "spec.containers[0].resources.limits.ephemeral-storage: ignored, Berth accounts for "
          "GPUs, CPUs and memory only",
          "spec.containers[0].livenessProbe: ignored, Berth has no probes",
          "spec.containers[0].ports: ignored, a Berth container uses the host's network, with "
          "nothing to publish",
          "spec.containers[0].colour: ignored, it has no meaning in Berth",
          "spec.volumes[1]: ignored, no container mounts it",
          "spec.restartPolicy: ignored, a Berth job runs until it ends and is not restarted; a "
          "Job's backoffLimit sets retries",
          "spec.hostNetwork: ignored, a Berth container always uses the host's network",
          "spec.tolerations: ignored, Berth nodes have no taints",
          "spec.initContainers: ignored, Berth runs one container; run their steps in its "
          "command",
          "status: ignored, Kubernetes writes it; it is no part of a request"));
}

// What `kubectl create job train --image=img --dry-run=client -o yaml --
// python train.py` prints: its null and empty fields say nothing, so they
// are not warned about, and the job is the container's command.
TEST(KubeManifestTest, KubectlsOwnOutputIsReadWithoutWarnings) {
  constexpr std::string_view kKubectlJob = R"(apiVersion: batch/v1
kind: Job
metadata:
  creationTimestamp: null
  name: train
spec:
  template:
    metadata:
      creationTimestamp: null
    spec:
      containers:
      - command:
        - python
        - train.py
        image: img
        name: train
        resources: {}
      restartPolicy: Never
status: {}
)";
  EXPECT_THAT(Warnings(kKubectlJob), IsEmpty());
  const json body = Body(kKubectlJob);
  EXPECT_EQ(body["name"], "train");
  EXPECT_EQ(body["container"]["image"], "img");
  EXPECT_EQ(body["container"]["entrypoint"], json::array({"python"}));
  EXPECT_EQ(body["command"], json::array({"train.py"}));
  EXPECT_EQ(body["gpus"], 0);
}

TEST(KubeManifestTest, AJobsOwnFieldsWithoutMeaningAreWarnedToo) {
  EXPECT_THAT(Warnings(R"(apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  completionMode: Indexed
  ttlSecondsAfterFinished: 100
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: c, image: img}]
)"),
              ElementsAre("spec.completionMode: ignored, each task's index is in RANK and "
                          "BERTH_TASK, not JOB_COMPLETION_INDEX",
                          "spec.template.metadata.labels: ignored, Berth jobs carry no labels",
                          "spec.ttlSecondsAfterFinished: ignored, Berth keeps a finished job's "
                          "record"));
}

TEST(KubeManifestTest, ErrorsNameTheField) {
  const std::string job_head = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n";
  const std::string job_tail = "  template:\n    spec:\n      containers: [{name: c, image: i}]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"apiVersion: apps/v1\nkind: Deployment\n",
       "kind: expected Pod (v1) or Job (batch/v1), got 'Deployment'"},
      {"apiVersion: batch/v1\nkind: Pod\nspec: {}\n", "apiVersion: a Pod is v1, got 'batch/v1'"},
      {"apiVersion: v1\nkind: Job\n", "apiVersion: a Job is batch/v1, got 'v1'"},
      {"kind: Pod\n", "apiVersion: a Pod is v1, got ''"},
      {"apiVersion: v1\nkind: Pod\n", "spec: is required"},
      {"apiVersion: v1\nkind: Pod\nspec: {}\n", "spec.containers: is required"},
      {"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - {name: a, image: x}\n"
       "  - {name: b, image: y}\n",
       "spec.containers: Berth runs exactly one container, got 2"},
      {Pod("").replace(Pod("").find("    image: img\n"), 15, ""),
       "spec.containers[0].image: is required"},
      {Pod("    env:\n    - name: TOKEN\n      valueFrom: {secretKeyRef: {name: s, key: k}}\n"),
       "spec.containers[0].env[0].valueFrom: not supported"},
      {Pod("    envFrom: [{configMapRef: {name: cm}}]\n"),
       "spec.containers[0].envFrom: not supported"},
      {Pod("    env: [{value: x}]\n"), "spec.containers[0].env[0].name: expected a variable name"},
      {Pod("    resources: {limits: {cpu: lots}}\n"),
       "spec.containers[0].resources.limits.cpu: expected a Kubernetes quantity"},
      {Pod("    resources: {limits: {memory: 1Gb}}\n"),
       "spec.containers[0].resources.limits.memory: expected a Kubernetes quantity"},
      {Pod("    resources: {limits: {nvidia.com/gpu: 0.5}}\n"),
       "spec.containers[0].resources.limits.nvidia.com/gpu: expected a whole number"},
      {Pod("    resources: {limits: {nvidia.com/gpu: 1}, requests: {nvidia.com/gpu: 2}}\n"),
       "spec.containers[0].resources.requests.nvidia.com/gpu: must equal"},
      {Pod("    resources: {limits: {memory: 1Gi}, requests: {memory: 2Gi}}\n"),
       "spec.containers[0].resources.requests.memory: must not exceed"},
      {Pod("    volumeMounts: [{name: data, mountPath: /data}]\n"),
       "spec.containers[0].volumeMounts[0].name: no volume in spec.volumes is named 'data'"},
      {Pod("    volumeMounts: [{name: data, mountPath: /data}]\n",
           "  volumes: [{name: data, emptyDir: {}}]\n"),
       "spec.volumes[0].emptyDir: only hostPath volumes can be mounted in Berth"},
      {Pod("    volumeMounts: [{name: data, mountPath: data}]\n",
           "  volumes: [{name: data, hostPath: {path: /srv}}]\n"),
       "spec.containers[0].volumeMounts[0].mountPath: expected an absolute path"},
      {Pod("", "  volumes: [{name: data, hostPath: {path: srv}}]\n"),
       "spec.volumes[0].hostPath.path: expected an absolute host path"},
      {Pod("    volumeMounts: [{name: d, mountPath: /d, readOnly: maybe}]\n",
           "  volumes: [{name: d, hostPath: {path: /srv}}]\n"),
       "spec.containers[0].volumeMounts[0].readOnly: expected true or false"},
      {Pod("    workingDir: work\n"), "spec.containers[0].workingDir: expected an absolute path"},
      {Pod("    imagePullPolicy: Sometimes\n"), "spec.containers[0].imagePullPolicy: expected"},
      {Pod("    command: python\n"), "spec.containers[0].command: expected a list of strings"},
      {Pod("", "  nodeSelector: {\"gpu node\": x}\n"),
       "spec.nodeSelector.gpu node: 'gpu node=x' cannot be a Berth node label"},
      {Pod("", "  activeDeadlineSeconds: 0\n"),
       "spec.activeDeadlineSeconds: expected an integer >= 1"},
      {Pod("", "  restartPolicy: Sometimes\n"),
       "spec.restartPolicy: expected Never, OnFailure or Always"},
      {job_head + "  parallelism: 2\n  completions: 4\n" + job_tail,
       "spec.completions: Berth runs parallelism tasks as one gang"},
      {job_head + "  parallelism: 0\n" + job_tail, "spec.parallelism: expected an integer >= 1"},
      {job_head + "  backoffLimit: x\n" + job_tail, "spec.backoffLimit: expected an integer >= 0"},
      {job_head + "  template:\n    spec:\n      restartPolicy: Always\n"
                  "      containers: [{name: c, image: i}]\n",
       "spec.template.spec.restartPolicy: a Job's Pod restarts Never or OnFailure"},
      {job_head + "  template: {}\n", "spec.template.spec.containers: is required"},
      {"", "manifest: empty"},
      {std::string(kDesignNotePod) + "---\n" + std::string(kDesignNotePod),
       "manifest: 2 YAML documents; give one Pod or Job per file"},
      {"apiVersion: v1\nkind: Pod\nspec: [\n", "manifest: line "},
      {"- a\n- b\n", "manifest: expected a mapping of fields"},
  };
  for (const auto& [yaml, message] : cases) {
    EXPECT_THAT(Error(yaml), StartsWith(message)) << yaml;
  }
}

TEST(KubeManifestTest, EmptyDocumentsAroundTheManifestAreNotDocuments) {
  const json body = Body("---\n" + std::string(kDesignNotePod) + "---\n");
  EXPECT_EQ(body["name"], "gpu-task");
}

}  // namespace
}  // namespace berth::cli
