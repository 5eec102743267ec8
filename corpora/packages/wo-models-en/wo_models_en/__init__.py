"""English models of wo: dependency, CCG and SR word ordering, the English 4-gram LM and the tree-view LMs.

Data only: wo finds this directory through the ``wo.models`` entry point
(:func:`wo.resources.model_dirs`); ``wo models`` lists its models.  Licence: UD English-EWT (CC BY-SA 4.0); the 4-gram LM and the models using it: non-commercial (Brown corpus).
"""
