"""Contains all the data models used in inputs/outputs"""

from .advice_view import AdviceView
from .api_key_view import ApiKeyView
from .author_view import AuthorView
from .backfill_counts import BackfillCounts
from .backfill_state import BackfillState
from .backfill_view import BackfillView
from .backoff import Backoff
from .cache import Cache
from .cache_policy_type_0 import CachePolicyType0
from .cache_policy_type_1 import CachePolicyType1
from .cache_scope_type_0 import CacheScopeType0
from .cache_scope_type_1 import CacheScopeType1
from .cache_scope_view import CacheScopeView
from .cache_stats import CacheStats
from .catchup_policy import CatchupPolicy
from .condition import Condition
from .container import Container
from .couler_workflow import CoulerWorkflow
from .couler_workflow_api_version import CoulerWorkflowApiVersion
from .couler_workflow_labels import CoulerWorkflowLabels
from .create_api_key import CreateApiKey
from .create_backfill import CreateBackfill
from .create_run import CreateRun
from .create_run_labels import CreateRunLabels
from .create_run_parameters import CreateRunParameters
from .create_tenant import CreateTenant
from .created_api_key import CreatedApiKey
from .credential import Credential
from .data_card import DataCard
from .decision_view import DecisionView
from .delivery_outcome import DeliveryOutcome
from .draft_summary_view import DraftSummaryView
from .draft_view import DraftView
from .draft_view_decomposition import DraftViewDecomposition
from .draft_view_explanations_item import DraftViewExplanationsItem
from .draft_view_warnings_item import DraftViewWarningsItem
from .env_var import EnvVar
from .event_list import EventList
from .event_view import EventView
from .event_view_data import EventViewData
from .explain_request import ExplainRequest
from .explain_request_parameters import ExplainRequestParameters
from .explain_totals import ExplainTotals
from .explained_step import ExplainedStep
from .explanation import Explanation
from .feedback_body import FeedbackBody
from .framework import Framework
from .generate_body import GenerateBody
from .generation_detail import GenerationDetail
from .generation_summary import GenerationSummary
from .goal import Goal
from .graph_node import GraphNode
from .graph_request import GraphRequest
from .graph_view import GraphView
from .group import Group
from .halving import Halving
from .health import Health
from .hints import Hints
from .hints_node_selector import HintsNodeSelector
from .import_format import ImportFormat
from .import_request import ImportRequest
from .import_request_source_type_0 import ImportRequestSourceType0
from .import_result import ImportResult
from .input_artifact import InputArtifact
from .inputs import Inputs
from .invalidate_request import InvalidateRequest
from .list_generation_summary import ListGenerationSummary
from .list_run_view import ListRunView
from .list_secret_audit_view import ListSecretAuditView
from .list_secret_view import ListSecretView
from .list_step_template_view import ListStepTemplateView
from .list_workflow_summary import ListWorkflowSummary
from .llm_usage_view import LlmUsageView
from .map_over import MapOver
from .me_view import MeView
from .model_card import ModelCard
from .node_kind import NodeKind
from .objective import Objective
from .operator import Operator
from .output_artifact import OutputArtifact
from .output_parameter import OutputParameter
from .outputs import Outputs
from .overlap import Overlap
from .own_entry import OwnEntry
from .param_kind import ParamKind
from .parameter import Parameter
from .part_view import PartView
from .pause_request import PauseRequest
from .plan_options import PlanOptions
from .plan_options_parameters import PlanOptionsParameters
from .plan_view import PlanView
from .planned_step_view import PlannedStepView
from .preview_tick import PreviewTick
from .preview_view import PreviewView
from .problem import Problem
from .problem_item import ProblemItem
from .put_secret import PutSecret
from .put_secret_data import PutSecretData
from .quotas_view import QuotasView
from .removed import Removed
from .replica import Replica
from .reprocess import Reprocess
from .resources import Resources
from .retry import Retry
from .retry_on_type_0 import RetryOnType0
from .retry_on_type_1 import RetryOnType1
from .role import Role
from .rotate_webhook import RotateWebhook
from .run_options import RunOptions
from .run_options_labels import RunOptionsLabels
from .run_options_parameters import RunOptionsParameters
from .run_status import RunStatus
from .run_view import RunView
from .run_view_labels import RunViewLabels
from .run_view_outputs_type_0 import RunViewOutputsType0
from .run_view_parameters import RunViewParameters
from .run_view_step_counts_type_0 import RunViewStepCountsType0
from .run_workflow_ref import RunWorkflowRef
from .schedule import Schedule
from .schedule_settings import ScheduleSettings
from .schedule_settings_labels import ScheduleSettingsLabels
from .schedule_settings_parameters_type_0 import ScheduleSettingsParametersType0
from .schedule_view import ScheduleView
from .schedule_view_labels import ScheduleViewLabels
from .schedule_view_parameters import ScheduleViewParameters
from .script import Script
from .search_param import SearchParam
from .search_view import SearchView
from .search_view_configurations_item import SearchViewConfigurationsItem
from .secret_action import SecretAction
from .secret_audit_view import SecretAuditView
from .secret_ref import SecretRef
from .secret_view import SecretView
from .set_budget import SetBudget
from .split_budget_view import SplitBudgetView
from .step import Step
from .step_action import StepAction
from .step_cache_status import StepCacheStatus
from .step_cache_view import StepCacheView
from .step_network import StepNetwork
from .step_network_setting import StepNetworkSetting
from .step_status import StepStatus
from .step_template import StepTemplate
from .step_template_kind import StepTemplateKind
from .step_template_needs_item import StepTemplateNeedsItem
from .step_template_view import StepTemplateView
from .step_view import StepView
from .step_view_outputs import StepViewOutputs
from .strategy_type_0 import StrategyType0
from .strategy_type_1 import StrategyType1
from .strategy_type_2 import StrategyType2
from .template_step import TemplateStep
from .tenant_view import TenantView
from .tick_kind import TickKind
from .tick_outcome import TickOutcome
from .tick_view import TickView
from .training_job import TrainingJob
from .training_job_replicas import TrainingJobReplicas
from .trigger_kind import TriggerKind
from .trigger_view import TriggerView
from .tune import Tune
from .tune_space import TuneSpace
from .unsupported_item import UnsupportedItem
from .update_tenant import UpdateTenant
from .usage_view import UsageView
from .version_summary import VersionSummary
from .version_view import VersionView
from .webhook_accepted import WebhookAccepted
from .webhook_auth import WebhookAuth
from .webhook_created import WebhookCreated
from .webhook_delivery import WebhookDelivery
from .webhook_filter import WebhookFilter
from .webhook_filter_headers import WebhookFilterHeaders
from .webhook_filter_payload import WebhookFilterPayload
from .webhook_settings import WebhookSettings
from .webhook_settings_parameter_map_type_0 import WebhookSettingsParameterMapType0
from .webhook_settings_parameters_type_0 import WebhookSettingsParametersType0
from .webhook_view import WebhookView
from .webhook_view_parameter_map import WebhookViewParameterMap
from .webhook_view_parameters import WebhookViewParameters
from .while_loop import WhileLoop
from .workflow_detail import WorkflowDetail
from .workflow_summary import WorkflowSummary
from .workflow_summary_labels import WorkflowSummaryLabels

__all__ = (
    "AdviceView",
    "ApiKeyView",
    "AuthorView",
    "BackfillCounts",
    "BackfillState",
    "BackfillView",
    "Backoff",
    "Cache",
    "CachePolicyType0",
    "CachePolicyType1",
    "CacheScopeType0",
    "CacheScopeType1",
    "CacheScopeView",
    "CacheStats",
    "CatchupPolicy",
    "Condition",
    "Container",
    "CoulerWorkflow",
    "CoulerWorkflowApiVersion",
    "CoulerWorkflowLabels",
    "CreateApiKey",
    "CreateBackfill",
    "CreatedApiKey",
    "CreateRun",
    "CreateRunLabels",
    "CreateRunParameters",
    "CreateTenant",
    "Credential",
    "DataCard",
    "DecisionView",
    "DeliveryOutcome",
    "DraftSummaryView",
    "DraftView",
    "DraftViewDecomposition",
    "DraftViewExplanationsItem",
    "DraftViewWarningsItem",
    "EnvVar",
    "EventList",
    "EventView",
    "EventViewData",
    "ExplainedStep",
    "ExplainRequest",
    "ExplainRequestParameters",
    "ExplainTotals",
    "Explanation",
    "FeedbackBody",
    "Framework",
    "GenerateBody",
    "GenerationDetail",
    "GenerationSummary",
    "Goal",
    "GraphNode",
    "GraphRequest",
    "GraphView",
    "Group",
    "Halving",
    "Health",
    "Hints",
    "HintsNodeSelector",
    "ImportFormat",
    "ImportRequest",
    "ImportRequestSourceType0",
    "ImportResult",
    "InputArtifact",
    "Inputs",
    "InvalidateRequest",
    "ListGenerationSummary",
    "ListRunView",
    "ListSecretAuditView",
    "ListSecretView",
    "ListStepTemplateView",
    "ListWorkflowSummary",
    "LlmUsageView",
    "MapOver",
    "MeView",
    "ModelCard",
    "NodeKind",
    "Objective",
    "Operator",
    "OutputArtifact",
    "OutputParameter",
    "Outputs",
    "Overlap",
    "OwnEntry",
    "Parameter",
    "ParamKind",
    "PartView",
    "PauseRequest",
    "PlannedStepView",
    "PlanOptions",
    "PlanOptionsParameters",
    "PlanView",
    "PreviewTick",
    "PreviewView",
    "Problem",
    "ProblemItem",
    "PutSecret",
    "PutSecretData",
    "QuotasView",
    "Removed",
    "Replica",
    "Reprocess",
    "Resources",
    "Retry",
    "RetryOnType0",
    "RetryOnType1",
    "Role",
    "RotateWebhook",
    "RunOptions",
    "RunOptionsLabels",
    "RunOptionsParameters",
    "RunStatus",
    "RunView",
    "RunViewLabels",
    "RunViewOutputsType0",
    "RunViewParameters",
    "RunViewStepCountsType0",
    "RunWorkflowRef",
    "Schedule",
    "ScheduleSettings",
    "ScheduleSettingsLabels",
    "ScheduleSettingsParametersType0",
    "ScheduleView",
    "ScheduleViewLabels",
    "ScheduleViewParameters",
    "Script",
    "SearchParam",
    "SearchView",
    "SearchViewConfigurationsItem",
    "SecretAction",
    "SecretAuditView",
    "SecretRef",
    "SecretView",
    "SetBudget",
    "SplitBudgetView",
    "Step",
    "StepAction",
    "StepCacheStatus",
    "StepCacheView",
    "StepNetwork",
    "StepNetworkSetting",
    "StepStatus",
    "StepTemplate",
    "StepTemplateKind",
    "StepTemplateNeedsItem",
    "StepTemplateView",
    "StepView",
    "StepViewOutputs",
    "StrategyType0",
    "StrategyType1",
    "StrategyType2",
    "TemplateStep",
    "TenantView",
    "TickKind",
    "TickOutcome",
    "TickView",
    "TrainingJob",
    "TrainingJobReplicas",
    "TriggerKind",
    "TriggerView",
    "Tune",
    "TuneSpace",
    "UnsupportedItem",
    "UpdateTenant",
    "UsageView",
    "VersionSummary",
    "VersionView",
    "WebhookAccepted",
    "WebhookAuth",
    "WebhookCreated",
    "WebhookDelivery",
    "WebhookFilter",
    "WebhookFilterHeaders",
    "WebhookFilterPayload",
    "WebhookSettings",
    "WebhookSettingsParameterMapType0",
    "WebhookSettingsParametersType0",
    "WebhookView",
    "WebhookViewParameterMap",
    "WebhookViewParameters",
    "WhileLoop",
    "WorkflowDetail",
    "WorkflowSummary",
    "WorkflowSummaryLabels",
)
