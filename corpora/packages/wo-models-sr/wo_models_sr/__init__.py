"""wo's SR models, one per UD treebank (wo sr realize --lang CODE).

Data only: wo finds this directory through the ``wo.models`` entry point
(:func:`wo.resources.model_dirs`); ``wo models`` lists its models.  Licence: each model carries its treebank's licence (sr/README.md): CC BY-SA 4.0, CC BY-NC-SA 4.0/3.0, LGPL-LR.
"""
